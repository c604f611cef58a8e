package ai.spboucher.spbgit.gateway.jobs;

import ai.spboucher.spbgit.proto.EgressAttempt;
import ai.spboucher.spbgit.proto.JobEvent;
import ai.spboucher.spbgit.proto.LogStream;
import com.google.protobuf.ByteString;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * The gateway's job metrics: jobs by status ({@code spb_jobs}), queue depth ({@code
 * spb_job_queue_depth}), dispatch latency from creation to the container running ({@code
 * spb_job_dispatch_seconds}), ended jobs by exit reason ({@code spb_jobs_finished_total}), the
 * jobs' log lines by stream ({@code spb_job_log_lines_total}) and their refused egress attempts
 * ({@code spb_egress_refusals_total}). Thread-safe.
 */
public final class JobMetrics {

  private final MeterRegistry registry;
  private final Timer dispatch;
  private final AtomicLong queueDepth = new AtomicLong();
  private final Map<String, Counter> logLines;
  private final Map<String, Counter> egressRefusals;

  public JobMetrics(MeterRegistry registry, Supplier<List<Job>> jobs) {
    this.registry = registry;
    for (JobState status : JobState.values()) {
      Gauge.builder("spb_jobs", () -> jobs.get().stream().filter(j -> j.state() == status).count())
          .description("Jobs known to the gateway, by status")
          .tag("status", status.wire())
          .register(registry);
    }
    Gauge.builder("spb_job_queue_depth", queueDepth, AtomicLong::get)
        .description("Job requests waiting in the queue for a runner")
        .register(registry);
    dispatch =
        Timer.builder("spb_job_dispatch_seconds")
            .description("From job creation to its container running")
            .publishPercentiles(0.5, 0.99)
            .register(registry);
    // Fixed label sets, registered up front so each series exists from 0: runners cannot invent new
    // ones.
    logLines =
        Map.of(
            "stdout",
            logLinesCounter("stdout"),
            "stderr",
            logLinesCounter("stderr"),
            "runner",
            logLinesCounter("runner"));
    egressRefusals =
        Map.of(
            "proxy",
            refusalsCounter("proxy"),
            "model_endpoint",
            refusalsCounter("model_endpoint"),
            "other",
            refusalsCounter("other"));
  }

  private Counter logLinesCounter(String stream) {
    return Counter.builder("spb_job_log_lines_total")
        .description("Newline-ended lines in the jobs' logs")
        .tag("stream", stream)
        .register(registry);
  }

  private Counter refusalsCounter(String via) {
    return Counter.builder("spb_egress_refusals_total")
        .description(
            "Attempts of jobs to reach something outside their sandbox that the runner refused")
        .tag("via", via)
        .register(registry);
  }

  /**
   * Counts one job event as the runner stored it: the lines of a log chunk, a refused egress
   * attempt. Call it once per event, never for replays. Any thread.
   */
  public void count(JobEvent event) {
    if (event.hasLog()) {
      long lines = newlines(event.getLog().getData());
      if (lines > 0) {
        logLines.get(streamOf(event.getLog().getStream())).increment(lines);
      }
    } else if (event.hasEgress() && !event.getEgress().getAllowed()) {
      egressRefusals.get(viaOf(event.getEgress())).increment();
    }
  }

  /** Chunks are not aligned to lines: a line is counted in the chunk that ends it. */
  private static long newlines(ByteString data) {
    long count = 0;
    for (int i = 0; i < data.size(); i++) {
      if (data.byteAt(i) == '\n') {
        count++;
      }
    }
    return count;
  }

  private static String streamOf(LogStream stream) {
    return switch (stream) {
      case STDERR -> "stderr";
      case RUNNER -> "runner";
      default -> "stdout";
    };
  }

  private static String viaOf(EgressAttempt attempt) {
    String via = attempt.getVia();
    return "proxy".equals(via) || "model_endpoint".equals(via) ? via : "other";
  }

  void started(Job job) {
    if (job.createdAt() != null && job.startedAt() != null) {
      dispatch.record(
          Duration.between(Instant.parse(job.createdAt()), Instant.parse(job.startedAt())));
    }
  }

  void finished(Job job) {
    registry
        .counter("spb_jobs_finished_total", "exit_reason", String.valueOf(job.exitReason()))
        .increment();
  }

  public void queueDepth(long depth) {
    queueDepth.set(depth);
  }
}
