package ai.spboucher.spbgit.runner;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

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
 * A job request delivered twice: to a runner that stalls before acknowledging it, and, once the ack
 * wait has passed, again to another runner, which runs it. When the first runner comes back it
 * still holds the request and its acknowledgement is accepted; it must see that the job already
 * runs elsewhere and leave it alone, so the job runs once. (QueueIT covers the request published
 * twice and two runners sharing the queue.)
 */
@Timeout(value = 150, unit = TimeUnit.SECONDS)
class RedeliveryIT {

  /** Short, so the test waits for a redelivery seconds rather than the default 30 s. */
  static final Duration ACK_WAIT = Duration.ofSeconds(3);

  @TempDir Path tmp;
  JobTestBed bed;

  @BeforeEach
  void start() throws Exception {
    bed =
        JobTestBed.start(
            tmp, "60s", new JsonObject().put("jobAckWait", ACK_WAIT.toSeconds() + "s"));
    bed.createRepo("demo", Map.of("README.md", "hello\n"));
  }

  @AfterEach
  void stop() throws Exception {
    bed.close();
  }

  @Test
  void requestRedeliveredAfterTheAckWaitRunsOnce() throws Exception {
    try (FreezableProxy link = FreezableProxy.start(bed.nats.port());
        LoggedLines dispatchers = LoggedLines.of(JobDispatcher.class)) {
      bed.startRunner("stalled", Map.of("SPB_NATS_URL", link.natsUrl()));
      // Its fetch loop is set up (streams checked, consumer bound) once a pull request of it waits
      // in NATS.
      JobTestBed.awaitCondition(
          "the stalled runner asks for jobs",
          Duration.ofSeconds(20),
          () -> bed.runnersConsumer().getNumWaiting() > 0);
      assertEquals(
          ACK_WAIT,
          bed.runnersConsumer().getConsumerConfiguration().getAckWait(),
          "the job consumer has the configured SPB_JOB_ACK_WAIT");
      // From here on the stalled runner hears nothing: the request is delivered to it and waits in
      // the link.
      link.holdToClient();
      String id =
          bed.submit("demo", FaultChecks.numberedLines("run-", 32, 1, "0.25"), null)
              .getString("id");
      JobTestBed.awaitCondition(
          "the request is delivered to the stalled runner",
          Duration.ofSeconds(20),
          () -> bed.runnersConsumer().getNumAckPending() == 1);
      // Nor does anything it says reach NATS now, so the request stays unacknowledged.
      link.holdToServer();

      bed.startRunner("healthy", Map.of());
      JsonObject started = bed.await("demo", id, "started", ACK_WAIT.plus(Duration.ofSeconds(60)));
      assertEquals(
          "healthy", started.getString("runner_id"), "the request went to the other runner");
      assertEquals(
          2,
          bed.runnersConsumer().getDelivered().getConsumerSequence(),
          "the one request was delivered twice");

      // The stalled runner wakes up holding its copy, while the job runs on the other runner.
      link.release();
      dispatchers.await(1, Duration.ofSeconds(30), "job " + id, "not running it again");
      assertEquals(1, dispatchers.matching("took job " + id).size(), "the job was taken once");

      JsonObject done = bed.await("demo", id, "finished", Duration.ofSeconds(60));
      assertEquals("ok", done.getString("exit_reason"), done.encodePrettily());
      assertEquals("healthy", done.getString("runner_id"));
      List<JobEvent> published = bed.statusEvents(id);
      assertEquals(
          List.of(JobStatus.STARTED, JobStatus.FINISHED),
          published.stream().map(e -> e.getStatus().getStatus()).toList());
      assertTrue(
          published.stream().allMatch(e -> e.getStatus().getRunnerId().equals("healthy")),
          "" + published);
      FaultChecks.assertLogComplete(bed, "demo", id, "run-", 32);
      FaultChecks.assertAudited(
          bed, id, List.of("job_created", "job_dispatched", "job_started", "job_finished"));
      FaultChecks.assertNoContainerLeft(bed, id);
      assertEquals(0, bed.queuedRequests(), "nothing is left to run");
    }
  }
}
