package ai.spboucher.spbgit.benchmarks.system;

import ai.spboucher.spbgit.proto.JobEvent;
import ai.spboucher.spbgit.proto.JobStatus;
import ai.spboucher.spbgit.proto.Subjects;
import io.nats.client.Connection;
import io.nats.client.JetStreamSubscription;
import io.nats.client.Message;
import io.nats.client.Nats;
import io.nats.client.PullSubscribeOptions;
import io.nats.client.api.ConsumerConfiguration;
import io.nats.client.api.ConsumerInfo;
import io.nats.client.api.DeliverPolicy;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.PoolOptions;
import io.vertx.core.http.RequestOptions;
import io.vertx.core.json.JsonObject;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The queue under a burst: {@code --jobs} jobs ({@code true}) submitted at once through the REST
 * API (at most {@code --concurrency} requests in flight), run by two runners with two slots each
 * and small per-job limits. Every job must run exactly once, which is checked three independent
 * ways: the gateway's audit log (one created, dispatched, started and finished entry per job,
 * finished {@code ok}), the runners' status events in JetStream (one {@code STARTED} and one {@code
 * FINISHED} per job, one container per job), and the runners' own logs (one {@code took job} per
 * job over both runners); the queue must end empty with nothing redelivered.
 *
 * <p>Options: {@code --jobs 1000 --concurrency 64 --warmup 100 --http 1.1 --runners before}: {@code
 * --warmup} jobs are submitted (and run) first, so the burst meets a gateway that has served
 * before; {@code --http 2} submits over HTTP/2 instead; {@code --runners after} starts the runners
 * only once every job is queued.
 */
public final class QueueBenchmark {

  private static final Pattern TOOK = Pattern.compile("took job (\\S+) for ");

  private QueueBenchmark() {}

  public static void main(String[] args) throws Exception {
    var options = Report.options(args);
    int jobs = Report.intOption(options, "jobs", 1000);
    int concurrency = Report.intOption(options, "concurrency", 64);
    int warmup = Report.intOption(options, "warmup", 100);
    List<String> warmupIds = new ArrayList<>();
    Map<String, String> small =
        Map.of(
            "SPB_RUNNER_SLOTS",
            "2",
            "SPB_LIMIT_CPUS",
            "0.5",
            "SPB_LIMIT_MEMORY",
            "128m",
            "SPB_LIMIT_PIDS",
            "64",
            "SPB_LIMIT_DISK",
            "16m",
            "SPB_LIMIT_WALL",
            "60s");
    try (Report report = new Report("queue", args);
        SystemBed bed = SystemBed.start("30m")) {
      // "after": the runners start once every job is queued, to tell the queue's own rate from its
      // rate while
      // runners pull jobs and start containers on the same machine.
      boolean runnersAfter = "after".equals(options.get("runners"));
      if (!runnersAfter) {
        bed.startRunner("sysbench-a", small);
        bed.startRunner("sysbench-b", small);
      }
      bed.createRepo("bench");
      report.line("runners: 2, each %s", small);
      report.line(
          "start load %.2f", Machine.awaitQuiet(1.5, Report.intOption(options, "quiet-wait", 600)));

      Vertx vertx = Vertx.vertx();
      HttpClientOptions clientOptions =
          new HttpClientOptions().setKeepAlive(true).setConnectTimeout(10_000);
      HttpClient http =
          vertx.createHttpClient(clientOptions, new PoolOptions().setHttp1MaxSize(concurrency));
      if (warmup > 0) {
        // A gateway that has served requests before: its code compiled, its pools and connections
        // made.
        List<String> early =
            submitAll(bed, http, warmup, concurrency, new ArrayList<>(), new ArrayList<>());
        if (!runnersAfter) {
          for (String id : early) {
            bed.times(id).finishedSeen.get(30, TimeUnit.MINUTES);
          }
        }
        report.line("warm-up: %d jobs submitted%s", early.size(), runnersAfter ? "" : " and run");
        warmupIds.addAll(early);
      }
      List<Double> postMs = Collections.synchronizedList(new ArrayList<>());
      List<String> refused = Collections.synchronizedList(new ArrayList<>());
      CpuMeter cpu = new CpuMeter(bed);
      var cpuBefore = cpu.sample();
      long start = System.nanoTime();
      List<String> ids = submitAll(bed, http, jobs, concurrency, postMs, refused);
      double submitSeconds = (System.nanoTime() - start) / 1e9;
      double submitRate = jobs / submitSeconds;
      report.line(
          "submitted %d jobs in %.2f s = %.0f jobs/s (%d refused); POST latency %s",
          ids.size(), submitSeconds, submitRate, refused.size(), Stats.of(postMs).describe("ms"));
      report.line("while submitting: %s", CpuMeter.difference(cpuBefore, cpu.sample()));
      if (!refused.isEmpty()) {
        throw new IllegalStateException(
            "refused: " + refused.subList(0, Math.min(5, refused.size())));
      }

      if (runnersAfter) {
        bed.startRunner("sysbench-a", small);
        bed.startRunner("sysbench-b", small);
      }
      List<String> everyJob = new ArrayList<>(warmupIds);
      everyJob.addAll(ids);
      for (String id : everyJob) {
        bed.times(id).finishedSeen.get(90, TimeUnit.MINUTES);
      }
      double drainSeconds = (System.nanoTime() - start) / 1e9;
      report.line(
          "all %d jobs%s finished %.1f s after the burst's first POST: %.2f jobs/s through 2 runners x 2 "
              + "slots",
          everyJob.size(),
          runnersAfter && warmup > 0 ? " (warm-up included)" : "",
          drainSeconds,
          everyJob.size() / drainSeconds);
      awaitAudited(bed, everyJob.size());
      List<String> problems = new ArrayList<>();
      checkAudit(bed, everyJob, problems);
      Map<String, Integer> perRunner = checkStatusEvents(bed, everyJob, problems);
      checkRunnerLogs(bed, everyJob, problems);
      checkQueueEmpty(bed, problems);
      report.line("jobs per runner (STARTED events): %s", perRunner);
      problems.stream().limit(20).forEach(p -> report.line("PROBLEM " + p));
      boolean once = problems.isEmpty();
      report.line(
          "RESULT queue: %d jobs submitted at once at %.0f jobs/s (target >= 200/s: %s); every job ran exactly "
              + "once (audit log, status events, runner logs, empty queue, no redelivery): %s; all done in %.0f s",
          jobs,
          submitRate,
          submitRate >= 200 ? "MET" : "MISSED",
          once ? "MET" : "MISSED (" + problems.size() + " problems)",
          drainSeconds);
      vertx.close().await();
    }
  }

  /**
   * Submits {@code jobs} jobs ({@code true}) with at most {@code concurrency} requests in flight
   * over as many kept-alive connections; their ids. The client is Vert.x's, which costs the shared
   * cores far less per request than the JDK's.
   */
  private static List<String> submitAll(
      SystemBed bed,
      HttpClient http,
      int jobs,
      int concurrency,
      List<Double> postMs,
      List<String> refused)
      throws Exception {
    List<String> ids = Collections.synchronizedList(new ArrayList<>());
    Semaphore inFlight = new Semaphore(concurrency);
    CountDownLatch answered = new CountDownLatch(jobs);
    Buffer body = new JsonObject().put("task", "benchmark job").put("exec", "true").toBuffer();
    URI base = URI.create(bed.baseUrl);
    RequestOptions post =
        new RequestOptions()
            .setMethod(HttpMethod.POST)
            .setHost(base.getHost())
            .setPort(base.getPort())
            .setURI("/api/v1/repos/bench/agent-jobs")
            .putHeader("Authorization", "Bearer " + bed.ownerToken)
            .putHeader("Content-Type", "application/json")
            .setTimeout(60_000);
    for (int i = 0; i < jobs; i++) {
      inFlight.acquire();
      long sent = System.nanoTime();
      http.request(post)
          .compose(request -> request.send(body))
          .compose(
              response -> response.body().map(answer -> Map.entry(response.statusCode(), answer)))
          .onComplete(
              result -> {
                synchronized (postMs) {
                  postMs.add((System.nanoTime() - sent) / 1e6);
                }
                if (result.succeeded() && result.result().getKey() == 201) {
                  ids.add(new JsonObject(result.result().getValue()).getString("id"));
                } else {
                  synchronized (refused) {
                    refused.add(
                        result.failed()
                            ? result.cause().toString()
                            : result.result().getKey() + " " + result.result().getValue());
                  }
                }
                inFlight.release();
                answered.countDown();
              });
    }
    if (!answered.await(10, TimeUnit.MINUTES)) {
      throw new IllegalStateException("submissions still unanswered after 10 minutes");
    }
    return ids;
  }

  /**
   * The gateway records an end after the runner has published it: waits until it has recorded them
   * all.
   */
  private static void awaitAudited(SystemBed bed, int jobs) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(5);
    while (bed.auditEntries().stream()
                .filter(e -> "job_finished".equals(e.getString("event")))
                .count()
            < jobs
        && System.nanoTime() < deadline) {
      Thread.sleep(1000);
    }
  }

  /** One created, dispatched, started and finished ({@code ok}) entry per job. */
  private static void checkAudit(SystemBed bed, List<String> ids, List<String> problems)
      throws Exception {
    Map<String, Map<String, Integer>> counts = new HashMap<>();
    Map<String, String> reasons = new HashMap<>();
    for (JsonObject e : bed.auditEntries()) {
      counts
          .computeIfAbsent(e.getString("job"), k -> new HashMap<>())
          .merge(e.getString("event"), 1, Integer::sum);
      if ("job_finished".equals(e.getString("event"))) {
        reasons.put(e.getString("job"), e.getString("exit_reason"));
      }
    }
    for (String id : ids) {
      Map<String, Integer> c = counts.getOrDefault(id, Map.of());
      for (String event : List.of("job_created", "job_dispatched", "job_started", "job_finished")) {
        if (c.getOrDefault(event, 0) != 1) {
          problems.add("audit: job " + id + " has " + c.getOrDefault(event, 0) + " " + event);
        }
      }
      if (!"ok".equals(reasons.get(id))) {
        problems.add("audit: job " + id + " finished " + reasons.get(id));
      }
    }
    if (counts.size() != ids.size()) {
      problems.add("audit: " + counts.size() + " jobs in the log, " + ids.size() + " submitted");
    }
  }

  /**
   * One STARTED and one FINISHED per job in the stream, each job in its own container; returns jobs
   * per runner.
   */
  private static Map<String, Integer> checkStatusEvents(
      SystemBed bed, List<String> ids, List<String> problems) throws Exception {
    Map<String, List<JobEvent>> byJob = new HashMap<>();
    try (Connection connection = Nats.connect(bed.nats.url())) {
      JetStreamSubscription sub =
          connection
              .jetStream()
              .subscribe(
                  "spb.events.*.status",
                  PullSubscribeOptions.builder().stream(Subjects.EVENTS_STREAM)
                      .configuration(
                          ConsumerConfiguration.builder().deliverPolicy(DeliverPolicy.All).build())
                      .build());
      while (true) {
        List<Message> batch = sub.fetch(500, Duration.ofSeconds(1));
        if (batch.isEmpty()) {
          break;
        }
        for (Message m : batch) {
          JobEvent event = JobEvent.parseFrom(m.getData());
          byJob.computeIfAbsent(event.getJobId(), k -> new ArrayList<>()).add(event);
          m.ack();
        }
      }
    }
    Map<String, Integer> perRunner = new HashMap<>();
    Set<String> containers = new HashSet<>();
    for (String id : ids) {
      List<JobEvent> events = byJob.getOrDefault(id, List.of());
      long started =
          events.stream().filter(e -> e.getStatus().getStatus() == JobStatus.STARTED).count();
      long finished =
          events.stream().filter(e -> e.getStatus().getStatus() == JobStatus.FINISHED).count();
      if (started != 1 || finished != 1) {
        problems.add(
            "events: job " + id + " has " + started + " STARTED and " + finished + " FINISHED");
      }
      events.stream()
          .filter(e -> e.getStatus().getStatus() == JobStatus.STARTED)
          .forEach(
              e -> {
                perRunner.merge(e.getStatus().getRunnerId(), 1, Integer::sum);
                containers.add(e.getStatus().getContainerId());
              });
    }
    if (containers.size() != ids.size()) {
      problems.add(
          "events: " + containers.size() + " distinct containers for " + ids.size() + " jobs");
    }
    return perRunner;
  }

  /** Each job taken exactly once over both runners' logs. */
  private static void checkRunnerLogs(SystemBed bed, List<String> ids, List<String> problems)
      throws Exception {
    Map<String, Integer> taken = new HashMap<>();
    Matcher m = TOOK.matcher(bed.runnerLogs());
    while (m.find()) {
      taken.merge(m.group(1), 1, Integer::sum);
    }
    for (String id : ids) {
      if (taken.getOrDefault(id, 0) != 1) {
        problems.add("runner logs: job " + id + " taken " + taken.getOrDefault(id, 0) + " times");
      }
    }
    if (taken.size() != ids.size()) {
      problems.add("runner logs: " + taken.size() + " jobs taken, " + ids.size() + " submitted");
    }
  }

  /** Nothing left in the queue, nothing waiting for an acknowledgement, nothing redelivered. */
  private static void checkQueueEmpty(SystemBed bed, List<String> problems) throws Exception {
    try (Connection connection = Nats.connect(bed.nats.url())) {
      long left =
          connection
              .jetStreamManagement()
              .getStreamInfo(Subjects.JOBS_STREAM)
              .getStreamState()
              .getMsgCount();
      ConsumerInfo consumer =
          connection
              .jetStreamManagement()
              .getConsumerInfo(
                  Subjects.JOBS_STREAM, Subjects.runnersConsumer(Subjects.DEFAULT_IMAGE));
      if (left != 0 || consumer.getNumAckPending() != 0 || consumer.getRedelivered() != 0) {
        problems.add(
            "queue: "
                + left
                + " requests left, "
                + consumer.getNumAckPending()
                + " awaiting ack, "
                + consumer.getRedelivered()
                + " redelivered");
      }
    }
  }
}
