package ai.spboucher.spbgit.benchmarks.system;

import ai.spboucher.spbgit.proto.JobEvent;
import ai.spboucher.spbgit.proto.JobStatus;
import ai.spboucher.spbgit.runner.JobTestBed;
import ai.spboucher.spbgit.testsupport.GcLog;
import ai.spboucher.spbgit.testsupport.GitCli;
import ai.spboucher.spbgit.testsupport.NatsServerProcess;
import ai.spboucher.spbgit.testsupport.WallClock;
import io.nats.client.Connection;
import io.nats.client.Dispatcher;
import io.nats.client.Nats;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Pattern;

/**
 * The whole system as it runs in production, each part its own process: nats-server with JetStream,
 * the gateway JVM (with a GC log, for its heap), runner JVMs driving the Docker engine, and the
 * real agent image. The benchmark process is only a client: REST calls, websocket viewers, and a
 * core-NATS observer that timestamps status events as they are published.
 */
final class SystemBed implements AutoCloseable {

  static final String IMAGE = JobTestBed.IMAGE;
  private static final Pattern LISTENING = Pattern.compile("listening on (http://\\S+)");

  final Path dir;
  final NatsServerProcess nats;
  final ServiceProcess gateway;
  final String baseUrl;
  final String ownerToken;
  final Path gatewayGcLog;
  private final List<ServiceProcess> runners = new ArrayList<>();
  private final Map<String, ServiceProcess> runnerIds = new java.util.LinkedHashMap<>();
  private final HttpClient http =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
  private final Connection observer;
  private final Map<String, JobTimes> times = new ConcurrentHashMap<>();
  private boolean closed;

  /** When the observer saw a job's status events, in wall-clock microseconds (0 until seen). */
  static final class JobTimes {
    volatile long started;
    volatile long finished;

    /**
     * When the first chunk of the container's own output (not the runner's lines) passed; 0 if not
     * observed.
     */
    volatile long firstOutput;

    volatile String exitReason;
    volatile String runner;
    volatile String containerId;
    final CompletableFuture<Void> startedSeen = new CompletableFuture<>();
    final CompletableFuture<Void> finishedSeen = new CompletableFuture<>();
  }

  private SystemBed(
      Path dir, NatsServerProcess nats, ServiceProcess gateway, String baseUrl, Path gcLog)
      throws Exception {
    this.dir = dir;
    this.nats = nats;
    this.gateway = gateway;
    this.baseUrl = baseUrl;
    this.gatewayGcLog = gcLog;
    this.ownerToken =
        Files.readString(dir.resolve("gateway").resolve("initial-owner-token")).strip();
    this.observer = Nats.connect(nats.url());
    Dispatcher dispatcher = observer.createDispatcher(m -> onStatus(m.getData()));
    dispatcher.subscribe("spb.events.*.status");
    observer.flush(Duration.ofSeconds(5));
  }

  /**
   * Starts nats-server and the gateway ({@code SPB_JOB_WALL_LIMIT} = {@code wallLimit}); extra JVM
   * options for the gateway come from the {@code spb.bench.gatewayJvm} property (for example a
   * flight recording).
   */
  static SystemBed start(String wallLimit) throws Exception {
    Path dir = Files.createTempDirectory("spb-sysbench-");
    NatsServerProcess nats = NatsServerProcess.start(dir.resolve("nats"));
    Path gcLog = dir.resolve("gateway-gc.log");
    List<String> jvm = new ArrayList<>(List.of("-Xlog:gc:file=" + gcLog));
    jvm.addAll(extraJvm("spb.bench.gatewayJvm"));
    Map<String, String> env = new HashMap<>();
    env.put("SPB_DATA_DIR", dir.resolve("gateway").toString());
    env.put("SPB_HTTP_PORT", "0");
    env.put("SPB_NATS_URL", nats.url());
    env.put("SPB_JOB_WALL_LIMIT", wallLimit);
    ServiceProcess gateway =
        ServiceProcess.start(
            "gateway",
            "ai.spboucher.spbgit.gateway.Main",
            jvm,
            env,
            dir.resolve("gateway.log"),
            LISTENING);
    String url = gateway.find(LISTENING).group(1);
    SystemBed bed = new SystemBed(dir, nats, gateway, url, gcLog);
    // A benchmark stopped with Ctrl-C still stops its runners (and their containers), gateway and
    // nats-server.
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  try {
                    bed.close();
                  } catch (Exception e) {
                    System.err.println("cleaning up the benchmark's processes: " + e);
                  }
                },
                "sysbench-cleanup"));
    return bed;
  }

  private static List<String> extraJvm(String property) {
    String value = System.getProperty(property, "").trim();
    return value.isEmpty() ? List.of() : Arrays.asList(value.split("\\s+"));
  }

  /** A runner process with the production defaults, {@code env} overriding them. */
  ServiceProcess startRunner(String id, Map<String, String> env) throws Exception {
    Map<String, String> all = new HashMap<>();
    all.put("SPB_NATS_URL", nats.url());
    all.put("SPB_RUNNER_ID", id);
    all.put("SPB_AGENT_IMAGE", IMAGE);
    all.put("SPB_RUNNER_WORK_DIR", dir.resolve("runner-" + id).toString());
    all.put("SPB_GATEWAY_KEYS", dir.resolve("gateway/keys/job-bus").toString());
    all.putAll(env);
    ServiceProcess runner =
        ServiceProcess.start(
            "runner " + id,
            "ai.spboucher.spbgit.runner.Main",
            extraJvm("spb.bench.runnerJvm"),
            all,
            dir.resolve("runner-" + id + ".log"),
            Pattern.compile("runner " + Pattern.quote(id) + " ready"));
    runners.add(runner);
    runnerIds.put(id, runner);
    // Authorized as an operator does it: the gateway seals job tokens to it from now on.
    Path runnerKeys = Files.createDirectories(dir.resolve("gateway/keys/runners"));
    Files.copy(
        Path.of(all.get("SPB_RUNNER_WORK_DIR"), "runner-key.pub.pem"),
        runnerKeys.resolve(id + ".pub.pem"),
        java.nio.file.StandardCopyOption.REPLACE_EXISTING);
    return runner;
  }

  /** Creates {@code repo} with one commit on main. */
  void createRepo(String repo) throws Exception {
    HttpResponse<String> r =
        api("POST", "/api/v1/repos", new JsonObject().put("name", repo).encode());
    if (r.statusCode() != 201) {
      throw new IOException("cannot create " + repo + ": " + r.statusCode() + " " + r.body());
    }
    GitCli git = new GitCli(Files.createDirectories(dir.resolve("home")));
    Path work = Files.createDirectories(dir.resolve("seed-" + repo));
    git.ok(work, "init", "-q", "-b", "main");
    Files.writeString(work.resolve("README.md"), "benchmark repository\n");
    git.ok(work, "add", ".");
    git.ok(work, "commit", "-q", "-m", "seed");
    String push =
        baseUrl.replace("http://", "http://owner:" + ownerToken + "@") + "/" + repo + ".git";
    git.ok(work, "push", "-q", push, "main");
  }

  /**
   * A job the gateway accepted: its id and when the request was sent and answered (wall-clock µs).
   */
  record Submitted(String id, long sentMicros, long answeredMicros) {}

  /** {@code POST /api/v1/repos/:repo/agent-jobs} with an exec command; fails unless 201. */
  Submitted submit(String repo, String exec) throws Exception {
    String body = new JsonObject().put("task", "benchmark job").put("exec", exec).encode();
    long sent = WallClock.micros();
    HttpResponse<String> r = api("POST", "/api/v1/repos/" + repo + "/agent-jobs", body);
    long answered = WallClock.micros();
    if (r.statusCode() != 201) {
      throw new IOException("job refused: " + r.statusCode() + " " + r.body());
    }
    return new Submitted(new JsonObject(r.body()).getString("id"), sent, answered);
  }

  HttpResponse<String> api(String method, String path, String body) throws Exception {
    return http.send(request(method, path, body), HttpResponse.BodyHandlers.ofString());
  }

  HttpRequest request(String method, String path, String body) {
    HttpRequest.Builder b =
        HttpRequest.newBuilder(URI.create(baseUrl + path))
            .timeout(Duration.ofSeconds(60))
            .header("Authorization", "Bearer " + ownerToken)
            .method(
                method,
                body == null
                    ? HttpRequest.BodyPublishers.noBody()
                    : HttpRequest.BodyPublishers.ofString(body, StandardCharsets.UTF_8));
    if (body != null) {
      b.header("Content-Type", "application/json");
    }
    return b.build();
  }

  HttpClient http() {
    return http;
  }

  JsonObject job(String repo, String id) throws Exception {
    return new JsonObject(api("GET", "/api/v1/repos/" + repo + "/agent-jobs/" + id, null).body());
  }

  /** The audit log entries of every job, oldest first, as the API serves them. */
  List<JsonObject> auditEntries() throws Exception {
    return new JsonArray(api("GET", "/api/v1/agent-jobs", null).body())
        .stream().map(JsonObject.class::cast).toList();
  }

  JobTimes times(String jobId) {
    return times.computeIfAbsent(jobId, k -> new JobTimes());
  }

  /**
   * Also stamps the first chunk of each job's container output as it is published. Only for
   * benchmarks whose jobs print little: every log chunk of every job then passes through this
   * process too.
   */
  void observeFirstOutput() throws Exception {
    Dispatcher dispatcher =
        observer.createDispatcher(
            m -> {
              long now = WallClock.micros();
              try {
                JobEvent event = JobEvent.parseFrom(m.getData());
                JobTimes t = times(event.getJobId());
                if (t.firstOutput == 0
                    && event.getLog().getStream() != ai.spboucher.spbgit.proto.LogStream.RUNNER) {
                  t.firstOutput = now;
                }
              } catch (com.google.protobuf.InvalidProtocolBufferException e) {
                System.err.println("unreadable log event: " + e.getMessage());
              }
            });
    dispatcher.subscribe("spb.events.*.log");
    observer.flush(Duration.ofSeconds(5));
  }

  /** Waits for the runner's FINISHED event of the job; returns its exit reason. */
  String awaitFinished(String jobId, Duration timeout) throws Exception {
    JobTimes t = times(jobId);
    t.finishedSeen.get(timeout.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS);
    return t.exitReason;
  }

  /** NATS dispatcher thread: stamps each status event as it passes. */
  private void onStatus(byte[] data) {
    long now = WallClock.micros();
    try {
      JobEvent event = JobEvent.parseFrom(data);
      JobTimes t = times(event.getJobId());
      if (event.getStatus().getStatus() == JobStatus.STARTED && t.started == 0) {
        t.started = now;
        t.runner = event.getStatus().getRunnerId();
        t.containerId = event.getStatus().getContainerId();
        t.startedSeen.complete(null);
      } else if (event.getStatus().getStatus() == JobStatus.FINISHED && t.finished == 0) {
        t.finished = now;
        t.exitReason = event.getStatus().getExitReason();
        t.finishedSeen.complete(null);
      }
    } catch (com.google.protobuf.InvalidProtocolBufferException e) {
      System.err.println("unreadable status event: " + e.getMessage());
    }
  }

  /**
   * The number of GC events in the gateway's GC log so far: marks the start of a measuring window.
   */
  int gcMark() throws IOException {
    return gcPauses().size();
  }

  /**
   * The largest heap occupancy after a collection since {@code mark}, in bytes (0 if none
   * happened).
   */
  long maxHeapAfterGcSince(int mark) throws IOException {
    List<GcLog.Pause> pauses = gcPauses();
    long max = 0;
    for (GcLog.Pause p : pauses.subList(Math.min(mark, pauses.size()), pauses.size())) {
      max = Math.max(max, p.after());
    }
    return max;
  }

  /**
   * The largest heap occupancy before a collection since {@code mark}, in bytes: the peak the heap
   * reached.
   */
  long maxHeapBeforeGcSince(int mark) throws IOException {
    List<GcLog.Pause> pauses = gcPauses();
    long max = 0;
    for (GcLog.Pause p : pauses.subList(Math.min(mark, pauses.size()), pauses.size())) {
      max = Math.max(max, p.before());
    }
    return max;
  }

  int gcCountSince(int mark) throws IOException {
    return Math.max(0, gcPauses().size() - mark);
  }

  private List<GcLog.Pause> gcPauses() throws IOException {
    return GcLog.pauses(gatewayGcLog);
  }

  /** The runners' process ids, by runner id. */
  Map<String, Long> runnerPids() {
    Map<String, Long> pids = new java.util.LinkedHashMap<>();
    runnerIds.forEach((id, runner) -> pids.put(id, runner.pid()));
    return pids;
  }

  /** The runners' logs, concatenated. */
  String runnerLogs() throws IOException {
    StringBuilder all = new StringBuilder();
    for (ServiceProcess runner : runners) {
      all.append(runner.log());
    }
    return all.toString();
  }

  /**
   * Stops the runners first (they remove their containers, which needs NATS and the gateway still
   * up), then the gateway and nats-server, then deletes the scratch directory unless a job's tmpfs
   * is still mounted in it (or {@code -Dspb.bench.keep=true} asks to keep it, logs and all). Runs
   * once, whether called or from the shutdown hook.
   */
  @Override
  public synchronized void close() throws Exception {
    if (closed) {
      return;
    }
    closed = true;
    observer.close();
    for (ServiceProcess runner : runners) {
      runner.close();
    }
    gateway.close();
    nats.close();
    if (Boolean.getBoolean("spb.bench.keep")) {
      System.err.println("kept " + dir);
      return;
    }
    if (Files.readString(Path.of("/proc/mounts")).contains(dir.toString())) {
      System.err.println("leaving " + dir + ": a job's /work is still mounted in it");
      return;
    }
    try (var paths = Files.walk(dir)) {
      paths.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    }
  }
}
