package ai.spboucher.spbgit.runner;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.spboucher.spbgit.gateway.jobs.RunnerEvents;
import ai.spboucher.spbgit.proto.JobEvent;
import ai.spboucher.spbgit.proto.JobStatus;
import ai.spboucher.spbgit.proto.LogChunk;
import ai.spboucher.spbgit.proto.LogStream;
import ai.spboucher.spbgit.proto.StatusChange;
import ai.spboucher.spbgit.proto.Subjects;
import ai.spboucher.spbgit.testsupport.ShiftedClock;
import com.google.protobuf.ByteString;
import io.nats.client.Connection;
import io.nats.client.JetStream;
import io.nats.client.Nats;
import io.nats.client.PublishOptions;
import io.nats.client.api.ConsumerInfo;
import io.vertx.core.json.JsonObject;
import java.net.http.HttpResponse;
import java.nio.file.Files;
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
 * Events that arrive for a job the gateway has already ended: the first end is final. A late
 * STARTED or FINISHED changes neither the job nor the audit log (no second {@code job_finished});
 * the gateway acknowledges it, notes it in its own log, and the job's log still shows each chunk
 * once.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class LateEventIT {

  private static final String GHOST_CONTAINER = "c0ffee".repeat(10) + "c0ff";

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
  void lateEventsForACancelledJobChangeNothing() throws Exception {
    // No runner: the job waits in the queue, and the cancel takes it out of there.
    String id = bed.submit("demo", "echo never", null).getString("id");
    HttpResponse<String> cancel = bed.cancel("demo", id);
    assertEquals(202, cancel.statusCode(), cancel.body());
    JsonObject before = bed.job("demo", id);
    assertEquals("cancelled", before.getString("exit_reason"), before.encodePrettily());
    byte[] auditBefore = Files.readAllBytes(bed.auditLog());

    try (LoggedLines gatewayLog = LoggedLines.of(RunnerEvents.class);
        Connection nats = Nats.connect(bed.natsUrl())) {
      // What a runner that had taken the request anyway would publish, with the runner's message
      // ids.
      JetStream js = nats.jetStream();
      publish(
          js, Subjects.statusEvents(id), id + ".status.1", status(id, 1, JobStatus.STARTED, ""));
      publish(js, Subjects.logEvents(id), id + ".log.1", log(id, 1, "late-1\n"));
      publish(js, Subjects.logEvents(id), id + ".log.2", log(id, 2, "late-2\n"));
      publish(
          js, Subjects.statusEvents(id), id + ".status.2", status(id, 2, JobStatus.FINISHED, "ok"));
      // The same end and chunk once more, stored again as a retry from outside the duplicate window
      // would be.
      publish(
          js,
          Subjects.statusEvents(id),
          id + ".status.2-again",
          status(id, 2, JobStatus.FINISHED, "ok"));
      publish(js, Subjects.logEvents(id), id + ".log.2-again", log(id, 2, "late-2\n"));

      gatewayLog.await(
          1,
          Duration.ofSeconds(30),
          "job " + id + " already finished (cancelled)",
          "ignoring a late STARTED from runner 'ghost'");
      gatewayLog.await(
          2,
          Duration.ofSeconds(30),
          "job " + id + " already finished (cancelled)",
          "ignoring a late FINISHED (ok) from runner 'ghost'");
    }
    awaitGatewayCaughtUp();

    assertEquals(before, bed.job("demo", id), "the job is as the cancel left it");
    assertArrayEquals(
        auditBefore, Files.readAllBytes(bed.auditLog()), "no audit line was appended");
    FaultChecks.assertAudited(bed, id, List.of("job_created", "job_dispatched", "job_finished"));
    assertEquals(
        "late-1\nlate-2\n", FaultChecks.gatewayLog(bed, "demo", id), "each chunk once, in order");
    assertTrue(bed.jobContainers(id).isEmpty());
  }

  @Test
  void realEndArrivingAfterTheGatewayDeclaredTheJobLostIsIgnored() throws Exception {
    ShiftedClock clock = new ShiftedClock();
    bed.restartGatewayWith(clock);
    bed.startRunner("slow", Map.of());
    String id =
        bed.submit("demo", FaultChecks.numberedLines("tick-", 30, 1, "0.5"), null).getString("id");
    bed.await("demo", id, "started", Duration.ofSeconds(60));

    JsonObject lost;
    try (LoggedLines gatewayLog = LoggedLines.of(RunnerEvents.class)) {
      // Past the deadline and the slack after it: the gateway's overdue check (every 5 s) gives up
      // on the job.
      clock.shift(Duration.ofMinutes(15));
      lost = bed.await("demo", id, "finished", Duration.ofSeconds(30));
      assertEquals("runner_lost", lost.getString("exit_reason"), lost.encodePrettily());
      assertFalse(
          bed.jobContainers(id).isEmpty(), "the runner still runs the job the gateway gave up on");

      StatusChange reported = bed.awaitFinishedEvent(id, Duration.ofSeconds(60));
      assertEquals("ok", reported.getExitReason(), "the runner's own end, which arrives late");
      gatewayLog.await(
          1,
          Duration.ofSeconds(30),
          "job " + id + " already finished (runner_lost)",
          "ignoring a late FINISHED (ok) from runner 'slow'");
    }
    awaitGatewayCaughtUp();

    assertEquals(lost, bed.job("demo", id), "the gateway's end stands");
    FaultChecks.assertAudited(
        bed, id, List.of("job_created", "job_dispatched", "job_started", "job_finished"));
    FaultChecks.assertLogComplete(bed, "demo", id, "tick-", 30);
    FaultChecks.assertNoContainerLeft(bed, id);
  }

  /** Waits until the gateway has acknowledged every status event in the stream. */
  private void awaitGatewayCaughtUp() throws Exception {
    JobTestBed.awaitCondition(
        "the gateway acknowledged every status event",
        Duration.ofSeconds(30),
        () -> {
          try (Connection nats = Nats.connect(bed.natsUrl())) {
            ConsumerInfo info =
                nats.jetStreamManagement()
                    .getConsumerInfo(Subjects.EVENTS_STREAM, Subjects.GATEWAY_EVENTS_CONSUMER);
            return info.getNumPending() == 0 && info.getNumAckPending() == 0;
          }
        });
  }

  private static void publish(JetStream js, String subject, String messageId, JobEvent event)
      throws Exception {
    assertFalse(
        js.publish(
                subject, event.toByteArray(), PublishOptions.builder().messageId(messageId).build())
            .isDuplicate(),
        messageId + " was stored");
  }

  private static JobEvent status(String id, long sequence, JobStatus status, String exitReason) {
    return JobEvent.newBuilder()
        .setJobId(id)
        .setSequence(sequence)
        .setTimestampEpochMs(System.currentTimeMillis())
        .setStatus(
            StatusChange.newBuilder()
                .setStatus(status)
                .setExitReason(exitReason)
                .setRunnerId("ghost")
                .setContainerId(GHOST_CONTAINER))
        .build();
  }

  private static JobEvent log(String id, long sequence, String text) {
    return JobEvent.newBuilder()
        .setJobId(id)
        .setSequence(sequence)
        .setTimestampEpochMs(System.currentTimeMillis())
        .setLog(
            LogChunk.newBuilder()
                .setStream(LogStream.STDOUT)
                .setData(ByteString.copyFromUtf8(text)))
        .build();
  }
}
