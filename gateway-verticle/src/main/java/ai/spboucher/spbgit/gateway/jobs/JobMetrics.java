package ai.spboucher.spbgit.gateway.jobs;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * The gateway's job metrics: jobs by status ({@code spb_jobs}), queue depth ({@code spb_job_queue_depth}),
 * dispatch latency from creation to the container running ({@code spb_job_dispatch_seconds}) and ended jobs by
 * exit reason ({@code spb_jobs_finished_total}). Thread-safe.
 */
public final class JobMetrics {

  private final MeterRegistry registry;
  private final Timer dispatch;
  private final AtomicLong queueDepth = new AtomicLong();

  public JobMetrics(MeterRegistry registry, Supplier<List<Job>> jobs) {
    this.registry = registry;
    for (String status : List.of(Job.QUEUED, Job.DISPATCHED, Job.STARTED, Job.FINISHED)) {
      Gauge.builder("spb_jobs", () -> jobs.get().stream().filter(j -> status.equals(j.status())).count())
          .description("Jobs known to the gateway, by status").tag("status", status).register(registry);
    }
    Gauge.builder("spb_job_queue_depth", queueDepth, AtomicLong::get)
        .description("Job requests waiting in the queue for a runner").register(registry);
    dispatch = Timer.builder("spb_job_dispatch_seconds").description("From job creation to its container running")
        .publishPercentiles(0.5, 0.99).register(registry);
  }

  void started(Job job) {
    if (job.createdAt() != null && job.startedAt() != null) {
      dispatch.record(Duration.between(Instant.parse(job.createdAt()), Instant.parse(job.startedAt())));
    }
  }

  void finished(Job job) {
    registry.counter("spb_jobs_finished_total", "exit_reason", String.valueOf(job.exitReason())).increment();
  }

  public void queueDepth(long depth) {
    queueDepth.set(depth);
  }
}
