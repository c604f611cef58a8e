package ai.spboucher.spbgit.benchmarks.system;

import ai.spboucher.spbgit.gateway.nats.JobBusSigner;
import ai.spboucher.spbgit.proto.JobRequest;
import ai.spboucher.spbgit.proto.Limits;
import ai.spboucher.spbgit.proto.Mode;
import ai.spboucher.spbgit.proto.Subjects;
import ai.spboucher.spbgit.runner.JobTestBed;
import ai.spboucher.spbgit.testsupport.WallClock;
import io.nats.client.Connection;
import io.nats.client.JetStream;
import io.nats.client.Nats;
import io.nats.client.PublishOptions;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

/**
 * Queue latency: from publishing a job request to JetStream (as the gateway does) to a waiting
 * runner taking it. "Taking" is the runner's own {@code took job} log record, written right after
 * it has fetched and acknowledged the request; its timestamp comes from the record itself (the
 * runner runs in this JVM, so both ends read one clock). The requests carry a deadline already
 * passed, so the runner ends each at once without a container: only the queue is measured, and the
 * next request finds the runner idle again, waiting in its fetch.
 *
 * <p>Requests are published one at a time with random gaps of 50-250 ms, so none waits behind
 * another. The baseline is what a polling runner would give: half its poll interval on average (2-3
 * s intervals elsewhere).
 *
 * <p>Options: {@code --samples 500 --warmup 50 --slots 1,2,4}: one runner per slot count, each
 * measured in turn.
 */
public final class PublishLatencyBenchmark {

  private static final Map<String, Long> TAKEN = new ConcurrentHashMap<>();

  /**
   * Held here: java.util.logging keeps loggers only weakly, and with them the handler added below.
   */
  private static final Logger DISPATCHER_LOG =
      Logger.getLogger("ai.spboucher.spbgit.runner.JobDispatcher");

  private PublishLatencyBenchmark() {}

  public static void main(String[] args) throws Exception {
    var options = Report.options(args);
    int samples = Report.intOption(options, "samples", 500);
    int warmup = Report.intOption(options, "warmup", 50);
    String[] slotCounts = options.getOrDefault("slots", "1,2,4").split(",");
    listenForTakes();
    try (Report report = new Report("publish-latency", args)) {
      report.line(
          "start load %.2f", Machine.awaitQuiet(1.5, Report.intOption(options, "quiet-wait", 600)));
      for (String slots : slotCounts) {
        Path tmp = Files.createTempDirectory("spb-sysbench-publish-");
        try (JobTestBed bed = JobTestBed.start(tmp, "30m")) {
          bed.startRunner("sysbench-" + slots, Map.of("SPB_RUNNER_SLOTS", slots));
          measure(report, bed, Integer.parseInt(slots), samples, warmup);
        }
      }
    }
  }

  private static void measure(Report report, JobTestBed bed, int slots, int samples, int warmup)
      throws Exception {
    List<Double> took = new ArrayList<>();
    List<Double> acked = new ArrayList<>();
    try (Connection connection = Nats.connect(bed.nats.url())) {
      JetStream jetStream = connection.jetStream();
      for (int i = -warmup; i < samples; i++) {
        Thread.sleep(ThreadLocalRandom.current().nextLong(50, 251));
        String id = "bench-" + slots + "-" + (i + warmup);
        long now = System.currentTimeMillis();
        JobBusSigner.Signed request =
            bed.signed(
                JobRequest.newBuilder()
                    .setJobId(id)
                    .setRepo("bench")
                    .setCloneUrl(bed.gateway.repoUrl("bench"))
                    .setBaseRef("main")
                    .setTask("benchmark job")
                    .setMode(Mode.MODE_EXEC)
                    .setExecCommand("true")
                    .setLimits(Limits.newBuilder().setWallSeconds(60))
                    // Already passed: the runner takes the job and ends it at once, without a
                    // container.
                    .setDeadlineEpochMs(now - 1000)
                    .setCreatedEpochMs(now)
                    .build(),
                "not-used");
        long sent = WallClock.micros();
        jetStream.publish(
            Subjects.jobRequests(Subjects.DEFAULT_IMAGE),
            request.headers(),
            request.data(),
            PublishOptions.builder().messageId(id).build());
        long ack = WallClock.micros();
        Long taken = awaitTaken(id);
        if (i >= 0) {
          took.add((taken - sent) / 1000.0);
          acked.add((ack - sent) / 1000.0);
        }
      }
    }
    Stats t = Stats.of(took);
    report.line("slots=%d publish->JetStream ack: %s", slots, Stats.of(acked).describe("ms"));
    report.line("slots=%d publish->runner took:  %s", slots, t.describe("ms"));
    report.line(
        "RESULT publish->runner (runner with %d slot%s): p50 %.1f ms, p99 %.1f ms (target p99 <= 20 ms): %s;"
            + " a runner polling every 2-3 s would average 1000-1500 ms",
        slots, slots == 1 ? "" : "s", t.p50(), t.p99(), t.p99() <= 20 ? "MET" : "MISSED");
  }

  private static long awaitTaken(String id) throws InterruptedException {
    long deadline = System.nanoTime() + 30_000_000_000L;
    while (System.nanoTime() < deadline) {
      Long t = TAKEN.remove(id);
      if (t != null) {
        return t;
      }
      Thread.sleep(1);
    }
    throw new IllegalStateException("no runner took " + id + " within 30 s");
  }

  /**
   * Stamps each {@code took job <id>} record of the in-process runners with the record's own time.
   */
  private static void listenForTakes() {
    DISPATCHER_LOG.addHandler(
        new Handler() {
          @Override
          public void publish(LogRecord record) {
            String message = record.getMessage();
            if (message != null && message.startsWith("took job ")) {
              var instant = record.getInstant();
              TAKEN.put(
                  message.substring(9, message.indexOf(' ', 9)),
                  instant.getEpochSecond() * 1_000_000L + instant.getNano() / 1_000);
            }
          }

          @Override
          public void flush() {}

          @Override
          public void close() {}
        });
  }
}
