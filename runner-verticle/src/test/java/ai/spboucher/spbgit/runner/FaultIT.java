package ai.spboucher.spbgit.runner;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.spboucher.spbgit.gateway.audit.AuditLog;
import ai.spboucher.spbgit.proto.AuditChain;
import ai.spboucher.spbgit.proto.JobEvent;
import ai.spboucher.spbgit.proto.JobStatus;
import io.vertx.core.json.JsonObject;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Crashes and restarts mid-job: a runner process killed with SIGKILL, and the gateway closed and
 * started again on its data directory. Each test gets its own NATS, gateway and runner, so no state
 * leaks between them.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class FaultIT {

  @TempDir Path tmp;
  JobTestBed bed;

  @BeforeEach
  void start() throws Exception {
    bed = JobTestBed.start(tmp, "60s");
    bed.createRepo("demo", Map.of("README.md", "hello\n"));
  }

  @AfterEach
  void stop() throws Exception {
    bed.close();
  }

  @Test
  void runnerKilledMidJobIsReportedLostByItsRestart() throws Exception {
    String id = null;
    try (RunnerProcess runner =
        RunnerProcess.start(bed.runnerEnv("crashy"), tmp.resolve("runner-logs"))) {
      id = bed.submit("demo", "sleep 120", null).getString("id");
      bed.await("demo", id, "started", Duration.ofSeconds(60));

      runner.kill();
      assertEquals(
          1, bed.jobContainers(id).size(), "the killed runner leaves its container behind");

      runner.restart();
      // The runner reclaims leftovers before it says it is ready.
      assertTrue(
          bed.jobContainers(id).isEmpty(), "the restarted runner removed the leftover container");
      List<JobStatus> published =
          bed.statusEvents(id).stream().map(e -> e.getStatus().getStatus()).toList();
      assertEquals(
          List.of(JobStatus.STARTED, JobStatus.FINISHED),
          published,
          "the restart reported the job's end on NATS; runner log:\n" + runner.log());
      JsonObject lost = bed.await("demo", id, "finished", Duration.ofSeconds(30));
      assertEquals("runner_lost", lost.getString("exit_reason"), lost.encodePrettily());
      assertEquals("crashy", lost.getString("runner_id"));
      assertEquals(
          List.of("job_created", "job_dispatched", "job_started", "job_finished"),
          bed.auditEvents(id));
      AuditChain.Result chain = AuditLog.verify(bed.auditLog());
      assertTrue(chain.ok(), chain.message());
    } finally {
      if (id != null) {
        bed.removeContainers(id);
      }
    }
  }

  @Test
  void gatewayRestartedMidJobRecordsTheEndItMissed() throws Exception {
    bed.startRunner("steady", Map.of());
    String id = bed.submit("demo", "sleep 8; echo done", null).getString("id");
    bed.await("demo", id, "started", Duration.ofSeconds(60));
    // The job clones from the gateway first (through the runner's git relay): stop it only once
    // that is done.
    JobTestBed.awaitCondition(
        "job " + id + " has cloned",
        Duration.ofSeconds(60),
        () -> bed.log(id).contains("running exec command"));

    bed.stopGateway();
    // The runner publishes FINISHED before it removes the container: once it is gone, the end is in
    // NATS.
    JobTestBed.awaitCondition(
        "job " + id + " ends while the gateway is down",
        Duration.ofSeconds(40),
        () -> bed.jobContainers(id).isEmpty());
    List<JobEvent> published = bed.statusEvents(id);
    assertEquals(JobStatus.FINISHED, published.get(published.size() - 1).getStatus().getStatus());

    bed.startGateway();
    JsonObject done = bed.await("demo", id, "finished", Duration.ofSeconds(30));
    assertEquals("ok", done.getString("exit_reason"), done.encodePrettily());
    assertEquals("steady", done.getString("runner_id"));
    assertTrue(bed.log(id).contains("done"));
    assertEquals(
        List.of("job_created", "job_dispatched", "job_started", "job_finished"),
        bed.auditEvents(id));
    AuditChain.Result chain = AuditLog.verify(bed.auditLog());
    assertTrue(chain.ok(), chain.message());
    assertFalse(bed.containerExists(id));
  }
}
