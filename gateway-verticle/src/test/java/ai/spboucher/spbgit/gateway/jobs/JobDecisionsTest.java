package ai.spboucher.spbgit.gateway.jobs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.spboucher.spbgit.gateway.errors.RequestException;
import io.vertx.core.json.JsonObject;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The owner's decisions: {@link JobDecisions}. */
class JobDecisionsTest extends JobLifecycleFixture {

  @Test
  void cancelsAJobNoRunnerTookAtOnce() throws Exception {
    Job created = on(() -> jobs.creation().create(REPO, EXEC_JOB, OWNER));
    queue.removesCancelled = true;
    Job cancelled = on(() -> jobs.decisions().cancel(created.id()));
    assertEquals(List.of(created.id() + "@1"), queue.cancelled);
    assertEquals("cancelled", cancelled.exitReason());
    assertEquals("cancelled before a runner took it", cancelled.detail());
    assertTrue(tokens.isRevoked(created.tokenId()));
    assertInstanceOf(
        RequestException.Conflict.class, failure(() -> jobs.decisions().cancel(created.id())));
    assertInstanceOf(
        RequestException.NotFound.class, failure(() -> jobs.decisions().cancel("no-such-job")));
  }

  @Test
  void leavesTheEndOfACancelledRunningJobToItsRunner() throws Exception {
    Job created = on(() -> jobs.creation().create(REPO, EXEC_JOB, OWNER));
    queue.deliver(started(created.id()));
    Job afterCancel = on(() -> jobs.decisions().cancel(created.id()));
    assertEquals(Job.STARTED, afterCancel.status());
    assertFalse(tokens.isRevoked(created.tokenId()));
    queue.deliver(finished(created.id(), "cancelled"));
    assertEquals("cancelled", job(created.id()).exitReason());
    assertTrue(tokens.isRevoked(created.tokenId()));
  }

  @Test
  void approvingARevisionOfAnAttemptSupersedesTheOtherAttempts() throws Exception {
    List<Job> attempts =
        on(() -> jobs.creation().createGroup(REPO, EXEC_JOB, OWNER, 3).map(Map.Entry::getValue));
    for (Job attempt : attempts) {
      assertTrue(queue.deliver(finished(attempt.id(), "ok")).succeeded());
      commitOn(attempt.proposalRef(), attempt.id() + ".txt", "work\n");
    }
    Job chosen = attempts.get(1);
    Job revision =
        on(
            () ->
                jobs.revisions()
                    .revise(
                        jobs.ledger().get(chosen.id()).orElseThrow(),
                        new NewRevision("and more", null, "echo more >> more.txt", ""),
                        OWNER));
    assertNull(revision.group(), "a revision is a lone job");
    assertTrue(queue.deliver(finished(revision.id(), "ok")).succeeded());
    String sha = commit(revision.proposalRef(), chosen.proposalRef(), Map.of("more.txt", "more\n"));

    Job approved =
        on(
            () ->
                jobs.decisions()
                    .approve(jobs.ledger().get(revision.id()).orElseThrow(), "main", sha, OWNER));
    assertEquals("approved", approved.decision().getString("decision"));
    for (Job attempt : attempts) {
      JsonObject decision = job(attempt.id()).decision();
      assertEquals("superseded", decision.getString("decision"), attempt.id());
      assertEquals(revision.id(), decision.getString("superseded_by"));
    }
  }

  @Test
  void refusesToApproveUnfinishedJobsOrOntoABadBranchAndRejectsOnce() throws Exception {
    Job created = on(() -> jobs.creation().create(REPO, EXEC_JOB, OWNER));
    String sha = commitOn(created.proposalRef(), "hello.txt", "hello\n");
    Throwable running =
        failure(
            () ->
                jobs.decisions()
                    .approve(jobs.ledger().get(created.id()).orElseThrow(), "main", sha, OWNER));
    assertInstanceOf(RequestException.Conflict.class, running);
    assertTrue(
        running.getMessage().contains("approve it once it has finished"), running.getMessage());
    assertTrue(queue.deliver(finished(created.id(), "ok")).succeeded());
    assertInstanceOf(
        RequestException.Invalid.class,
        failure(
            () ->
                jobs.decisions()
                    .approve(jobs.ledger().get(created.id()).orElseThrow(), "a..b", sha, OWNER)));
    long before = audit.size();

    Job rejected =
        on(() -> jobs.decisions().reject(jobs.ledger().get(created.id()).orElseThrow(), OWNER));
    assertEquals("rejected", rejected.decision().getString("decision"));
    assertEquals(before + 1, audit.size());
    on(() -> jobs.decisions().reject(jobs.ledger().get(created.id()).orElseThrow(), OWNER));
    assertEquals(before + 1, audit.size(), "rejecting again records nothing");
    Throwable approveRejected =
        failure(
            () ->
                jobs.decisions()
                    .approve(jobs.ledger().get(created.id()).orElseThrow(), "main", sha, OWNER));
    assertInstanceOf(RequestException.Conflict.class, approveRejected);
    assertEquals("job " + created.id() + " was rejected", approveRejected.getMessage());
  }

  @Test
  void deletesTheJobsRefsAndAuditsWhichWent() throws Exception {
    Job created = on(() -> jobs.creation().create(REPO, EXEC_JOB, OWNER));
    assertTrue(queue.deliver(finished(created.id(), "ok")).succeeded());
    commitOn(created.proposalRef(), "hello.txt", "hello\n");

    List<String> deleted =
        on(() -> jobs.decisions().deleteRefs(jobs.ledger().get(created.id()).orElseThrow(), OWNER));
    assertEquals(List.of(created.proposalRef()), deleted);
    JsonObject entry = entry(created.id(), JobBook.REFS_DELETED);
    assertEquals(List.of(created.proposalRef()), entry.getJsonArray("refs").getList());
    long before = audit.size();
    assertEquals(
        List.of(),
        on(
            () ->
                jobs.decisions().deleteRefs(jobs.ledger().get(created.id()).orElseThrow(), OWNER)));
    assertEquals(before, audit.size(), "no refs left, nothing audited");
  }
}
