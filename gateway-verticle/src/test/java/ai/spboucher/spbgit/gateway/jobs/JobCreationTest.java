package ai.spboucher.spbgit.gateway.jobs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.spboucher.spbgit.gateway.errors.RequestException;
import ai.spboucher.spbgit.proto.CodingAgent;
import ai.spboucher.spbgit.proto.JobEvent;
import ai.spboucher.spbgit.proto.JobRequest;
import ai.spboucher.spbgit.proto.JobStatus;
import ai.spboucher.spbgit.proto.Mode;
import ai.spboucher.spbgit.proto.StatusChange;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import java.nio.file.Files;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Creating jobs and best-of-N groups: {@link JobCreation}. */
class JobCreationTest extends JobLifecycleFixture {

  @Test
  void createsAJobThatRunnersStartAndFinishThenRevokesItsToken() throws Exception {
    Job created = on(() -> jobs.creation().create(REPO, EXEC_JOB, OWNER));
    assertEquals(Job.DISPATCHED, created.status());
    assertEquals(1, created.queueSequence());
    JobRequest request = queue.published.get(0);
    assertEquals(created.id(), request.getJobId());
    assertEquals(Mode.MODE_EXEC, request.getMode());
    assertEquals("main", request.getBaseRef());
    assertEquals("https://git.example.org/demo.git", request.getCloneUrl());
    assertEquals(created.id(), tokens.verify(queue.tokens.get(request.getJobId())).jobId());
    assertFalse(
        Files.readString(audit.file()).contains(queue.tokens.get(request.getJobId())),
        "the token stays out of the log");
    assertEquals(List.of(JobBook.CREATED, JobBook.DISPATCHED), events(created.id()));

    assertTrue(queue.deliver(started(created.id())).succeeded());
    assertEquals(Job.STARTED, job(created.id()).status());
    assertEquals("runner-1", job(created.id()).runnerId());
    assertFalse(tokens.isRevoked(created.tokenId()));

    assertTrue(queue.deliver(finished(created.id(), "ok")).succeeded());
    Job done = job(created.id());
    assertEquals("ok", done.exitReason());
    assertEquals("container-1", done.containerId());
    assertTrue(tokens.isRevoked(created.tokenId()));
    assertEquals(
        List.of(JobBook.CREATED, JobBook.DISPATCHED, JobBook.STARTED, JobBook.FINISHED),
        events(created.id()));
  }

  @Test
  void refusesNewJobsAndCancelsWhileTheQueueIsDown() throws Exception {
    Job created = on(() -> jobs.creation().create(REPO, EXEC_JOB, OWNER));
    long entries = audit.size();
    queue.connected = false;
    assertInstanceOf(
        RequestException.Unavailable.class,
        failure(() -> jobs.creation().create(REPO, EXEC_JOB, OWNER)));
    assertInstanceOf(
        RequestException.Unavailable.class, failure(() -> jobs.decisions().cancel(created.id())));
    assertEquals(entries, audit.size(), "nothing recorded");
    assertEquals(1, queue.published.size());
  }

  @Test
  void endsAJobWhoseRequestCouldNotBeQueuedAsARunnerError() throws Exception {
    queue.publishFailure = new IllegalStateException("timed out");
    Throwable refused = failure(() -> jobs.creation().create(REPO, EXEC_JOB, OWNER));
    assertInstanceOf(RequestException.Unavailable.class, refused);
    assertEquals("could not queue the job: timed out", refused.getMessage());
    Job job = on(() -> Future.succeededFuture(jobs.ledger().list(REPO.value()).get(0)));
    assertEquals("runner_error", job.exitReason());
    assertEquals("could not queue the job: timed out", job.detail());
    assertTrue(tokens.isRevoked(job.tokenId()));
  }

  @Test
  void refusesWhatTheGatewayDoesNotAllowBeforeRecordingAnything() throws Exception {
    assertEquals(
        "no model provider is configured (SPB_MODEL), so jobs need an 'exec' shell command",
        failure(() -> jobs.creation().create(REPO, new NewJob("think", "", "", "", "", ""), OWNER))
            .getMessage());
    JobLifecycle withModels = startLifecycle(List.of("model-a", "model-b"));
    on(
        () -> {
          withModels.attach(queue);
          return Future.succeededFuture();
        });
    Throwable unlisted =
        failure(
            () ->
                withModels
                    .creation()
                    .create(REPO, new NewJob("think", "", "model-c", "", "", ""), OWNER));
    assertInstanceOf(RequestException.Invalid.class, unlisted);
    assertEquals(
        "model 'model-c' is not allowed; allowed: model-a, model-b", unlisted.getMessage());
    assertEquals(
        "model 'model-c' is not allowed; allowed: model-a, model-b",
        failure(
                () ->
                    withModels
                        .creation()
                        .create(REPO, new NewJob("think", "true", "model-c", "", "", ""), OWNER))
            .getMessage(),
        "an exec job's model endpoint is checked like an llm job's model");
    Throwable unknownAgent =
        failure(
            () ->
                withModels
                    .creation()
                    .create(REPO, new NewJob("think", "", "", "", "", "aider"), OWNER));
    assertInstanceOf(RequestException.Invalid.class, unknownAgent);
    assertEquals(
        "unknown agent 'aider' (builtin, claude-code, codex, qwen-code)",
        unknownAgent.getMessage());
    Throwable agentWithExec =
        failure(
            () ->
                withModels
                    .creation()
                    .create(REPO, new NewJob("think", "true", "", "", "", "claude-code"), OWNER));
    assertInstanceOf(RequestException.Invalid.class, agentWithExec);
    assertTrue(
        agentWithExec.getMessage().startsWith("'agent' applies to llm jobs only"),
        agentWithExec.getMessage());
    assertEquals(
        "no model provider is configured (SPB_MODEL), so an exec job cannot have the model"
            + " endpoint ('model')",
        failure(
                () ->
                    jobs.creation()
                        .create(REPO, new NewJob("think", "true", "model-a", "", "", ""), OWNER))
            .getMessage());
    assertInstanceOf(
        RequestException.Invalid.class,
        failure(
            () ->
                withModels
                    .creation()
                    .create(REPO, new NewJob("think", "true", "", "", "a..b", ""), OWNER)));
    assertInstanceOf(
        RequestException.Conflict.class,
        failure(
            () ->
                withModels
                    .creation()
                    .create(REPO, new NewJob("think", "true", "", "", "develop", ""), OWNER)));
    assertEquals(0, audit.size());

    Job llm =
        on(
            () ->
                withModels.creation().create(REPO, new NewJob("think", "", "", "", "", ""), OWNER));
    assertEquals("model-a", llm.model());
    assertEquals(Mode.MODE_LLM, queue.published.get(0).getMode());
  }

  @Test
  void recordsTheAgentItsPinnedVersionAndWhatTheRunnerReportedAndRestoresThemOnReplay()
      throws Exception {
    JobLifecycle withModels = startLifecycle(List.of("model-a", "model-b"));
    on(
        () -> {
          withModels.attach(queue);
          return Future.succeededFuture();
        });
    Job claude =
        on(
            () ->
                withModels
                    .creation()
                    .create(
                        REPO, new NewJob("think", "", "model-b", "", "", "claude-code"), OWNER));
    assertEquals("claude-code", claude.agent());
    assertEquals(CodingAgent.CLAUDE_CODE.pinnedVersion(), claude.agentVersion());
    JobRequest request = queue.published.get(0);
    assertEquals(Mode.MODE_LLM, request.getMode());
    assertEquals("claude-code", request.getAgent());
    assertEquals("model-b", request.getModel());
    assertFalse(request.getExecModel());
    JsonObject created = entry(claude.id(), JobBook.CREATED);
    assertEquals("claude-code", created.getString("agent"));
    assertEquals(CodingAgent.CLAUDE_CODE.pinnedVersion(), created.getString("agent_version"));
    assertEquals(false, created.getBoolean("exec_model"));

    Job builtin =
        on(
            () ->
                withModels.creation().create(REPO, new NewJob("think", "", "", "", "", ""), OWNER));
    assertEquals("builtin", builtin.agent());
    assertNull(builtin.agentVersion(), "the built-in agent is the runner's jar: no pinned version");
    assertEquals("builtin", queue.published.get(1).getAgent());

    Job metered =
        on(
            () ->
                withModels
                    .creation()
                    .create(
                        REPO,
                        new NewJob("run my agent", "./my-agent.sh", "model-b", "", "", ""),
                        OWNER));
    JobRequest execRequest = queue.published.get(2);
    assertEquals(Mode.MODE_EXEC, execRequest.getMode());
    assertTrue(execRequest.getExecModel());
    assertEquals("model-b", execRequest.getModel());
    assertEquals("", execRequest.getAgent());
    JsonObject execCreated = entry(metered.id(), JobBook.CREATED);
    assertEquals("exec", execCreated.getString("mode"));
    assertEquals(true, execCreated.getBoolean("exec_model"));
    assertNull(execCreated.getString("agent"));
    JsonObject execJson = metered.toJson(WorkShas.NONE);
    assertEquals("exec", execJson.getString("mode"));
    assertEquals(true, execJson.getBoolean("exec_model"));
    assertNull(execJson.getString("agent"));
    on(() -> withModels.creation().create(REPO, EXEC_JOB, OWNER));
    assertFalse(queue.published.get(3).getExecModel(), "no model, no endpoint");

    assertTrue(
        queue
            .deliver(
                JobEvent.newBuilder()
                    .setJobId(claude.id())
                    .setStatus(
                        StatusChange.newBuilder()
                            .setStatus(JobStatus.STARTED)
                            .setRunnerId("runner-1")
                            .setContainerId("container-1")
                            .setAgent("claude-code")
                            .setAgentVersion("2.1.329"))
                    .build())
            .succeeded());
    JsonObject started = entry(claude.id(), JobBook.STARTED);
    assertEquals("claude-code", started.getString("agent"));
    assertEquals("2.1.329", started.getString("agent_version"));
    JsonObject json = withModels.ledger().get(claude.id()).orElseThrow().toJson(WorkShas.NONE);
    assertEquals("claude-code", json.getString("agent"));
    assertEquals("2.1.329", json.getString("agent_version"), "the runner's version wins");
    assertEquals(false, json.getBoolean("exec_model"));

    JobLifecycle restarted = startLifecycle(List.of("model-a"));
    Job replayed =
        on(() -> Future.succeededFuture(restarted.ledger().get(claude.id()).orElseThrow()));
    assertEquals("claude-code", replayed.agent());
    assertEquals("2.1.329", replayed.agentVersion());
    Job replayedExec =
        on(() -> Future.succeededFuture(restarted.ledger().get(metered.id()).orElseThrow()));
    assertTrue(replayedExec.execModel());
    assertEquals("model-b", replayedExec.model());
  }

  @Test
  void aGroupWhoseLaterAttemptCannotBeQueuedCancelsTheAttemptsAlreadyQueued() throws Exception {
    queue.publishFailure = new IllegalStateException("NATS timed out");
    queue.publishesBeforeFailure = 1;
    queue.removesCancelled = true;
    Throwable refused = failure(() -> jobs.creation().createGroup(REPO, EXEC_JOB, OWNER, 3));
    assertInstanceOf(RequestException.Unavailable.class, refused);
    assertTrue(
        refused.getMessage().contains("could not queue attempt 2 of 3"), refused.getMessage());
    assertTrue(
        refused.getMessage().contains("the attempts already queued were cancelled"),
        refused.getMessage());
    String first = queue.published.get(0).getJobId();
    assertEquals(List.of(first + "@1"), queue.cancelled);
    assertEquals("cancelled", job(first).exitReason());
    List<Job> all = on(() -> Future.succeededFuture(jobs.ledger().list(REPO.value())));
    assertEquals(2, all.size(), "the third attempt was never made");
    assertTrue(all.stream().allMatch(Job::isFinished), "nothing of the group is left to run");
  }
}
