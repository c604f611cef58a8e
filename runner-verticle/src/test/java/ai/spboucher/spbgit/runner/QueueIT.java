package ai.spboucher.spbgit.runner;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.spboucher.spbgit.gateway.nats.JobBusSigner;
import ai.spboucher.spbgit.proto.JobEvent;
import ai.spboucher.spbgit.proto.JobStatus;
import ai.spboucher.spbgit.proto.Mode;
import ai.spboucher.spbgit.proto.Subjects;
import io.nats.client.Connection;
import io.nats.client.Nats;
import io.nats.client.PublishOptions;
import io.nats.client.api.ConsumerInfo;
import io.nats.client.api.PublishAck;
import io.vertx.core.json.JsonObject;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The JetStream job queue between the gateway and the runners: each job runs exactly once however
 * many runners share the queue, queued jobs survive a NATS crash, a cancelled job leaves the queue,
 * and a request published twice is stored once. Each test gets its own NATS and gateway and starts
 * the runners it needs.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class QueueIT {

  @TempDir Path tmp;
  JobTestBed bed;

  /**
   * Job ids as the in-process runners take them, one entry per take, whatever NATS later
   * deduplicates.
   */
  final TakenJobs taken = new TakenJobs();

  @BeforeEach
  void start() throws Exception {
    taken.attach();
    bed = JobTestBed.start(tmp, "60s");
    bed.createRepo("demo", Map.of("README.md", "hello\n"));
  }

  @AfterEach
  void stop() throws Exception {
    try {
      bed.close();
    } finally {
      taken.detach();
    }
  }

  @Test
  void twoRunnersShareTheQueueAndRunEachJobOnce() throws Exception {
    bed.startRunner("left", Map.of());
    bed.startRunner("right", Map.of());
    List<String> ids = new ArrayList<>();
    for (int i = 0; i < 6; i++) {
      ids.add(bed.submit("demo", "echo $SPB_JOB_ID >> /work/ran; sleep 1", null).getString("id"));
    }

    Set<String> runners = new HashSet<>();
    for (String id : ids) {
      JsonObject done = bed.await("demo", id, "finished", Duration.ofSeconds(60));
      assertEquals("ok", done.getString("exit_reason"), done.encodePrettily());
      runners.add(done.getString("runner_id"));
    }
    for (String id : ids) {
      assertEquals(1, taken.count(id), "takes of " + id);
      List<String> events = bed.auditEvents(id);
      assertEquals(1, events.stream().filter("job_started"::equals).count(), id + ": " + events);
      List<JobStatus> published =
          bed.statusEvents(id).stream().map(e -> e.getStatus().getStatus()).toList();
      assertEquals(
          List.of(JobStatus.STARTED, JobStatus.FINISHED), published, "status events of " + id);
    }
    // Each runner has one slot and every job holds it for seconds, so neither can take all six.
    assertEquals(Set.of("left", "right"), runners);
  }

  @Test
  void jobsQueuedWhenNatsCrashesRunAfterItsRestart() throws Exception {
    List<String> ids = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      JsonObject job = bed.submit("demo", "echo queued $SPB_JOB_ID", null);
      assertEquals("dispatched", job.getString("status"));
      ids.add(job.getString("id"));
    }
    assertEquals(3, bed.queuedRequests());

    bed.nats.kill();
    bed.nats.restart();
    assertEquals(3, bed.queuedRequests(), "the work queue is on disk");

    bed.startRunner("after-crash", Map.of());
    for (String id : ids) {
      JsonObject done = bed.await("demo", id, "finished", Duration.ofSeconds(60));
      assertEquals("ok", done.getString("exit_reason"), done.encodePrettily());
      assertTrue(bed.log(id).contains("queued " + id));
    }
    assertEquals(0, bed.queuedRequests());
  }

  @Test
  void jobCancelledWhileQueuedNeverRuns() throws Exception {
    String id = bed.submit("demo", "echo must-not-run", null).getString("id");
    HttpResponse<String> cancel = bed.cancel("demo", id);
    assertEquals(202, cancel.statusCode(), cancel.body());
    JsonObject answer = new JsonObject(cancel.body());
    assertEquals("finished", answer.getString("status"));
    assertEquals("cancelled", answer.getString("exit_reason"));
    assertEquals(0, bed.queuedRequests(), "the request left the queue");

    long runnerStarted = System.nanoTime();
    bed.startRunner("late", Map.of());
    // A job queued after the cancelled one: once it has run, the runner has been through the queue.
    String probe = bed.submit("demo", "true", null).getString("id");
    assertEquals(
        "ok",
        bed.await("demo", probe, "finished", Duration.ofSeconds(60)).getString("exit_reason"));
    long waitedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - runnerStarted);
    Thread.sleep(Math.max(0, 5_000 - waitedMs));

    JsonObject job = bed.job("demo", id);
    assertEquals("cancelled", job.getString("exit_reason"));
    assertEquals(List.of("job_created", "job_dispatched", "job_finished"), bed.auditEvents(id));
    // The gateway ignores events of a finished job, so only NATS can show that no runner started
    // it.
    assertEquals(List.of(), bed.statusEvents(id));
    assertEquals(0, taken.count(id));
    assertTrue(bed.jobContainers(id).isEmpty());
  }

  @Test
  void requestPublishedTwiceIsStoredAndRunOnce() throws Exception {
    String id = "dup-" + Long.toHexString(System.nanoTime());
    JobBusSigner.Signed request =
        bed.signed(
            bed.request("demo", id, Mode.MODE_EXEC, "published twice", 60)
                .setExecCommand("echo once")
                .build());
    try (Connection connection = Nats.connect(bed.nats.url())) {
      PublishOptions options = PublishOptions.builder().messageId(id).build();
      PublishAck first =
          connection
              .jetStream()
              .publish(
                  Subjects.jobRequests(Subjects.DEFAULT_IMAGE),
                  request.headers(),
                  request.data(),
                  options);
      PublishAck second =
          connection
              .jetStream()
              .publish(
                  Subjects.jobRequests(Subjects.DEFAULT_IMAGE),
                  request.headers(),
                  request.data(),
                  options);
      assertFalse(first.isDuplicate());
      assertTrue(
          second.isDuplicate(), "JetStream recognises the second publish by its Nats-Msg-Id");
      assertEquals(first.getSeqno(), second.getSeqno());
    }
    assertEquals(1, bed.queuedRequests());

    bed.startRunner("dedup-a", Map.of());
    bed.startRunner("dedup-b", Map.of());
    JobTestBed.awaitCondition(
        "job " + id + " finishes on a runner",
        Duration.ofSeconds(60),
        () ->
            bed.statusEvents(id).stream()
                .anyMatch(e -> e.getStatus().getStatus() == JobStatus.FINISHED));
    // Events carry per-job message ids, so NATS would hide a second run's events: count the takes
    // themselves.
    assertEquals(1, taken.count(id), "takes of " + id);
    ConsumerInfo consumer = bed.runnersConsumer();
    assertEquals(0, consumer.getRedelivered(), "nothing was offered again");
    assertEquals(0, consumer.getNumAckPending());
    List<JobEvent> events = bed.statusEvents(id);
    assertEquals(
        List.of(JobStatus.STARTED, JobStatus.FINISHED),
        events.stream().map(e -> e.getStatus().getStatus()).toList());
    assertEquals("ok", events.get(1).getStatus().getExitReason(), bed.log(id));
    assertEquals(0, bed.queuedRequests());
  }

  /**
   * Records the runners' own "took job" log lines ({@link JobDispatcher} logs one when it
   * acknowledges a request). Holds its logger strongly, since JUL keeps loggers only weakly.
   */
  static final class TakenJobs extends Handler {

    private static final Pattern TOOK = Pattern.compile("took job (\\S+) .*");
    private final Logger logger = Logger.getLogger(JobDispatcher.class.getName());
    private final List<String> ids = new CopyOnWriteArrayList<>();

    void attach() {
      logger.addHandler(this);
    }

    void detach() {
      logger.removeHandler(this);
    }

    long count(String jobId) {
      return ids.stream().filter(jobId::equals).count();
    }

    @Override
    public void publish(LogRecord record) {
      Matcher m = TOOK.matcher(String.valueOf(record.getMessage()));
      if (m.matches()) {
        ids.add(m.group(1));
      }
    }

    @Override
    public void flush() {}

    @Override
    public void close() {}
  }
}
