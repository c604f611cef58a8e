package ai.spboucher.spbgit.gateway.jobs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.spboucher.spbgit.gateway.audit.AuditLog;
import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/** What runners, pushes and the clock report: {@link RunnerEvents}. */
class RunnerEventsTest extends JobLifecycleFixture {

  @Test
  void ignoresEventsAfterTheFirstEndAndRedeliveredStarts() throws Exception {
    Job created = on(() -> jobs.creation().create(REPO, EXEC_JOB, OWNER));
    queue.deliver(started(created.id()));
    assertTrue(
        queue.deliver(started(created.id())).succeeded(), "a redelivered start is acknowledged");
    queue.deliver(finished(created.id(), "timeout"));
    long entries = audit.size();
    assertTrue(
        queue.deliver(finished(created.id(), "ok")).succeeded(), "a late end is acknowledged");
    assertTrue(queue.deliver(started(created.id())).succeeded());
    assertTrue(queue.deliver(finished("unknown-job", "ok")).succeeded());
    assertEquals(entries, audit.size(), "nothing recorded");
    assertEquals("timeout", job(created.id()).exitReason());
  }

  @Test
  void declaresJobsLostThatNoRunnerFinishedByTheirDeadline() throws Exception {
    Job created = on(() -> jobs.creation().create(REPO, EXEC_JOB, OWNER));
    Instant deadline = Instant.parse(created.deadline());
    clock.set(deadline.plus(RunnerEvents.LOST_AFTER).minusSeconds(1));
    on(jobs.runnerEvents()::reapOverdueJobs);
    assertFalse(job(created.id()).isFinished(), "not before the slack after the deadline");
    clock.set(deadline.plus(RunnerEvents.LOST_AFTER).plusSeconds(1));
    on(jobs.runnerEvents()::reapOverdueJobs);
    assertEquals("runner_lost", job(created.id()).exitReason());
    assertTrue(tokens.isRevoked(created.tokenId()));
  }

  @Test
  void endsTheJobsAPreviousRunLeftUnqueued() throws Exception {
    queue.publishHangs = true;
    on(
        () -> {
          jobs.creation().create(REPO, EXEC_JOB, OWNER);
          return Future.succeededFuture();
        });
    Job stuck = waitFor(() -> jobs.ledger().list(REPO.value()).stream().findFirst().orElse(null));
    assertEquals(Job.QUEUED, stuck.status());

    JobLifecycle restarted = startLifecycle(List.of());
    on(restarted.runnerEvents()::endInterruptedCreations);
    Job ended = on(() -> Future.succeededFuture(restarted.ledger().get(stuck.id()).orElseThrow()));
    assertEquals("runner_error", ended.exitReason());
    assertEquals("the gateway stopped before the job was queued", ended.detail());
    assertTrue(tokens.isRevoked(stuck.tokenId()));
  }

  @Test
  void aRefusalOfAKnownJobsRequestIsAuditedAndChangesNothing() throws Exception {
    Job created = on(() -> jobs.creation().create(REPO, EXEC_JOB, OWNER));
    assertTrue(queue.deliver(started(created.id())).succeeded());
    assertTrue(queue.deliver(refused(created.id(), 99, "not signed by the gateway")).succeeded());
    JsonObject refused = entry(created.id(), JobBook.REFUSED);
    assertEquals(REPO.value(), refused.getString("repo"));
    assertEquals("runner-2", refused.getString("runner"));
    assertEquals("not signed by the gateway", refused.getString("reason"));
    assertEquals(Job.STARTED, job(created.id()).status(), "the genuine job runs on");

    assertTrue(queue.deliver(finished(created.id(), "ok")).succeeded());
    assertTrue(queue.deliver(refused(created.id(), 100, "replay: it ran here")).succeeded());
    assertEquals(
        List.of(
            JobBook.CREATED,
            JobBook.DISPATCHED,
            JobBook.STARTED,
            JobBook.REFUSED,
            JobBook.FINISHED,
            JobBook.REFUSED),
        events(created.id()));
    assertEquals("ok", job(created.id()).exitReason(), "a replay leaves a finished job finished");
    assertTrue(AuditLog.verify(audit.file()).ok(), "the entries are chained");
  }

  @Test
  void theJobsOwnRequestRefusedAsTakenOnADoubleDeliveryIsNotAudited() throws Exception {
    Job created = on(() -> jobs.creation().create(REPO, EXEC_JOB, OWNER));
    assertTrue(
        queue
            .deliver(refused(created.id(), created.queueSequence(), "replay: runner 'a' runs it"))
            .succeeded());
    assertEquals(List.of(JobBook.CREATED, JobBook.DISPATCHED), events(created.id()));
  }

  @Test
  void aRefusalNamingNoKnownJobIsOnlyLogged() throws Exception {
    long before = audit.entries(e -> true).size();
    assertTrue(queue.deliver(refused("no-such-job", 7, "not signed")).succeeded());
    assertTrue(queue.deliver(refused("a.b>*" + "x".repeat(5000), 8, "forged")).succeeded());
    assertEquals(before, audit.entries(e -> true).size());
  }

  @Test
  void auditsTheRefsAJobPushedWhenToldFromAnotherThread() throws Exception {
    Job created = on(() -> jobs.creation().create(REPO, EXEC_JOB, OWNER));
    // The receive-pack post-receive step calls from a git worker thread, as this test thread.
    jobs.runnerEvents()
        .recordRefsWritten(
            created.id(),
            REPO.value(),
            created.tokenId(),
            new JsonArray().add(new JsonObject().put("ref", created.proposalRef())));
    waitFor(() -> jobs.ledger().get(created.id()).orElseThrow().refsWritten().isEmpty() ? null : 1);
    assertEquals(
        List.of(JobBook.CREATED, JobBook.DISPATCHED, JobBook.REFS_WRITTEN), events(created.id()));
  }
}
