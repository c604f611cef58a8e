package ai.spboucher.spbgit.gateway.jobs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.spboucher.spbgit.gateway.errors.RequestException;
import ai.spboucher.spbgit.proto.JobRequest;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Revising finished jobs: {@link JobRevisions}. */
class JobRevisionsTest extends JobLifecycleFixture {

  @Test
  void aRevisionIsQueuedOnTheRevisedWorkAndTheLinkIsRecordedOnBothJobs() throws Exception {
    Job first = on(() -> jobs.creation().create(REPO, EXEC_JOB, OWNER));
    NewRevision again = new NewRevision("say it twice", null, "echo hello >> hello.txt", "");
    assertInstanceOf(
        RequestException.Conflict.class,
        failure(
            () ->
                jobs.revisions().revise(jobs.ledger().get(first.id()).orElseThrow(), again, OWNER)),
        "a job still running is not revised");
    assertTrue(queue.deliver(finished(first.id(), "ok")).succeeded());
    assertInstanceOf(
        RequestException.Conflict.class,
        failure(
            () ->
                jobs.revisions().revise(jobs.ledger().get(first.id()).orElseThrow(), again, OWNER)),
        "nothing to revise without work");
    String proposal = commitOn(first.proposalRef(), "hello.txt", "hello\n");
    // Meanwhile the owner changes the repository's environment: the revision runs in the new one.
    commit(
        "refs/heads/main",
        "refs/heads/main",
        Map.of("README.md", "hello\n", ".spbgit/agent.yml", "image: node\n"),
        true);

    Job revision =
        on(
            () ->
                jobs.revisions().revise(jobs.ledger().get(first.id()).orElseThrow(), again, OWNER));
    JobRequest request = queue.published.get(1);
    assertEquals(revision.id(), request.getJobId());
    assertEquals("main", request.getBaseRef(), "cloned as the branch it will be approved onto");
    assertEquals(proposal, request.getBaseSha());
    assertEquals(first.proposalRef(), request.getBaseWorkRef());
    assertEquals("echo hello >> hello.txt", request.getExecCommand());
    assertEquals("base", queue.published.get(0).getEnvironment().getImage());
    assertEquals("node", request.getEnvironment().getImage(), "the default branch's file now");
    assertTrue(request.getTask().startsWith("say hello\n\n## Revision 2"), request.getTask());
    assertTrue(request.getTask().contains("say it twice"), request.getTask());
    assertEquals(revision.id(), job(first.id()).revisedBy());
    assertEquals(first.id(), revision.revision().revises());
    assertEquals(
        List.of(JobBook.CREATED, JobBook.DISPATCHED, JobBook.FINISHED, JobBook.REVISED),
        events(first.id()));
    assertEquals(List.of(JobBook.CREATED, JobBook.DISPATCHED), events(revision.id()));

    // While the revision runs, the first job is not revised a second time.
    Throwable busy =
        failure(
            () ->
                jobs.revisions().revise(jobs.ledger().get(first.id()).orElseThrow(), again, OWNER));
    assertInstanceOf(RequestException.Conflict.class, busy);
    assertTrue(
        busy.getMessage().contains("being revised by job " + revision.id()), busy.getMessage());
    // An llm field on an exec job's revision is refused before anything is read.
    assertInstanceOf(
        RequestException.Invalid.class,
        failure(
            () ->
                jobs.revisions()
                    .revise(
                        jobs.ledger().get(first.id()).orElseThrow(),
                        new NewRevision("x", null, "", ""),
                        OWNER)));
    assertEquals(2, queue.published.size());
  }

  @Test
  void aRevisionSetsUpOnItsChainsTrustedBaseNeverOnTheWorkItRevises() throws Exception {
    String environment =
        "image: node\nsetup: npm ci\nsetup_egress:\n  - registry.npmjs.org:443\n"
            + "cache:\n  - /work/repo/node_modules\ncache_key_files:\n  - package-lock.json\n";
    String trusted =
        commit(
            "refs/heads/main",
            "refs/heads/main",
            Map.of(
                "README.md", "hello\n",
                ".spbgit/agent.yml", environment,
                "package-lock.json", "{\"trusted\": true}\n"),
            true);
    Job first = on(() -> jobs.creation().create(REPO, EXEC_JOB, OWNER));
    JobRequest firstRequest = queue.published.get(0);
    assertEquals(trusted, firstRequest.getSetupSha(), "a job sets up on its own base");
    assertFalse(firstRequest.getEnvironment().getCacheKeyFilesDigest().isEmpty());
    assertTrue(queue.deliver(finished(first.id(), "ok")).succeeded());
    // The agent's work changes the lockfile (and could add an install script): it is no owner's.
    String work =
        commit(
            first.proposalRef(),
            "refs/heads/main",
            Map.of(
                "README.md", "hello\n",
                ".spbgit/agent.yml", environment,
                "package-lock.json", "{\"planted\": true}\n"));

    Job revision =
        on(
            () ->
                jobs.revisions()
                    .revise(
                        jobs.ledger().get(first.id()).orElseThrow(),
                        new NewRevision("again", null, "true", ""),
                        OWNER));
    JobRequest request = queue.published.get(1);
    assertEquals(revision.id(), request.getJobId());
    assertEquals(work, request.getBaseSha(), "the agent phase works on the revised work");
    assertEquals(trusted, request.getSetupSha(), "setup runs on the chain's original base");
    assertEquals(
        firstRequest.getEnvironment().getCacheKeyFilesDigest(),
        request.getEnvironment().getCacheKeyFilesDigest(),
        "the cache is keyed by the trusted base's lockfile, not the work's");
  }

  @Test
  void refusesCommentIdsTheJobDoesNotHaveBeforeQueueingAnything() throws Exception {
    Job first = on(() -> jobs.creation().create(REPO, EXEC_JOB, OWNER));
    assertTrue(queue.deliver(finished(first.id(), "ok")).succeeded());
    commitOn(first.proposalRef(), "hello.txt", "hello\n");
    Throwable refused =
        failure(
            () ->
                jobs.revisions()
                    .revise(
                        jobs.ledger().get(first.id()).orElseThrow(),
                        new NewRevision("", List.of(42L), "true", ""),
                        OWNER));
    assertInstanceOf(RequestException.Invalid.class, refused);
    assertEquals("job " + first.id() + " has no review comment 42", refused.getMessage());
    assertEquals(1, queue.published.size(), "no revision was queued");
    // The refusal released the job: a good request revises it.
    Job revision =
        on(
            () ->
                jobs.revisions()
                    .revise(
                        jobs.ledger().get(first.id()).orElseThrow(),
                        new NewRevision("again", null, "true", ""),
                        OWNER));
    assertEquals(first.id(), revision.revision().revises());
  }
}
