package ai.spboucher.spbgit.runner;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

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
 * nats-server killed with SIGKILL and restarted while a job runs. JetStream keeps the streams on
 * disk, so nothing it acknowledged is lost; the runner keeps the job's output queued and retries
 * each event with the same {@code Nats-Msg-Id} until NATS is back, so nothing is dropped or stored
 * twice. The job must end as it would have without the crash, its output reach the gateway exactly
 * once, and the audit log record it once.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class NatsFaultIT {

  private static final List<String> PUSHED_AND_ENDED =
      List.of("job_created", "job_dispatched", "job_started", "refs_written", "job_finished");
  private static final List<String> ENDED =
      List.of("job_created", "job_dispatched", "job_started", "job_finished");

  @TempDir Path tmp;
  JobTestBed bed;

  @BeforeEach
  void start() throws Exception {
    bed = JobTestBed.start(tmp, "60s");
    bed.createRepo("demo", Map.of("README.md", "hello\n"));
    bed.startRunner("steady", Map.of());
  }

  @AfterEach
  void stop() throws Exception {
    bed.close();
  }

  @Test
  void natsKilledAndRestartedMidJobLosesNothing() throws Exception {
    String exec = FaultChecks.numberedLines("step-", 40, 1, "0.25") + "; echo done > done.txt";
    String id = bed.submit("demo", exec, "test -f done.txt").getString("id");
    try (LiveLines live = LiveLines.watch(bed, id, "step-")) {
      live.await(5, Duration.ofSeconds(60));
    }

    // Shorter than the client's 5 s publish timeout: the publish under way completes once NATS is
    // back.
    bed.nats.kill();
    Thread.sleep(3_000);
    assertFalse(bed.jobContainers(id).isEmpty(), "the job still runs while NATS is down");
    bed.nats.restart();

    JsonObject done = bed.await("demo", id, "finished", Duration.ofSeconds(60));
    assertEquals("ok", done.getString("exit_reason"), done.encodePrettily());
    assertEquals("steady", done.getString("runner_id"));
    assertEquals(
        "passed", done.getString("test_result"), "the proposal was pushed and its test passed");
    FaultChecks.assertLogComplete(bed, "demo", id, "step-", 40);
    FaultChecks.assertAudited(bed, id, PUSHED_AND_ENDED);
    FaultChecks.assertNoContainerLeft(bed, id);
  }

  @Test
  void natsKilledAndRestartedMidLogStreamLosesNoLine() throws Exception {
    // 2,000 lines in bursts of 20 every 0.1 s: about ten seconds of steady output.
    String id =
        bed.submit("demo", FaultChecks.numberedLines("line-", 2000, 20, "0.1"), null)
            .getString("id");
    int before;
    try (LiveLines live = LiveLines.watch(bed, id, "line-")) {
      before = live.await(200, Duration.ofSeconds(60));
    }

    // Longer than the client's 5 s publish timeout: publishes fail and are retried, and the copies
    // the client
    // buffered meanwhile all reach the server once it is back, to be recognised by their message
    // ids.
    bed.nats.kill();
    Thread.sleep(7_000);
    assertFalse(bed.jobContainers(id).isEmpty(), "the job was still running while NATS was down");
    bed.nats.restart();

    JsonObject done = bed.await("demo", id, "finished", Duration.ofSeconds(60));
    assertEquals("ok", done.getString("exit_reason"), done.encodePrettily());
    FaultChecks.assertLogComplete(bed, "demo", id, "line-", 2000);
    FaultChecks.assertAudited(bed, id, ENDED);
    FaultChecks.assertNoContainerLeft(bed, id);
    // Sanity of the scenario itself: the kill came in the middle of the stream, not before or after
    // it.
    assertFalse(before >= 2000, "NATS was killed before the job had printed everything");
  }
}
