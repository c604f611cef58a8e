package ai.spboucher.spbgit.runner;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import ai.spboucher.spbgit.gateway.DeltaBomb;
import ai.spboucher.spbgit.gateway.SlowHeads;
import ai.spboucher.spbgit.gateway.audit.AuditLog;
import ai.spboucher.spbgit.proto.AuditChain;
import ai.spboucher.spbgit.runner.docker.DockerSandbox;
import ai.spboucher.spbgit.runner.docker.SandboxSpec;
import ai.spboucher.spbgit.testsupport.GatewayProcess;
import ai.spboucher.spbgit.testsupport.GcLog;
import ai.spboucher.spbgit.testsupport.GitCli;
import ai.spboucher.spbgit.testsupport.LogViewer;
import ai.spboucher.spbgit.testsupport.NatsServer;
import com.github.dockerjava.api.model.Container;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Load and abuse at once, with the real parts: 50 exec jobs submitted together to two runner
 * processes with small limits (a quarter of a CPU, 64 MiB, 64 processes and 16 MiB of {@code /work}
 * per job, 25 slots each), 500 websocket viewers of their live logs attached from the start, and a
 * stream of bad requests ({@link BadRequestStream}) for the whole run, against the gateway jar in
 * its own JVM with a 256 MiB heap. Every job first waits, polling its own repository through the
 * runner's git relay, until the branch {@code go} appears; the test pushes it once all 50
 * containers run, so all 50 jobs are running at the same moment whatever the machine's speed. Then
 * most jobs print 300 numbered lines over 20 s and leave a file, so they end {@code ok} with a
 * proposal; one exceeds its memory, one its wall clock and one its disk.
 *
 * <p>Afterwards: the gateway and the runners are alive and healthy; every job ended with its
 * expected {@code exit_reason}; every viewer got every line of its job exactly once, in order, then
 * the end frame with that reason; the gateway's text log of each job agrees; each job's audit
 * events are there once and the audit chain verifies; no bad request got anything but its 4xx (with
 * a JSON error) and none changed a ref; no container is left; and the gateway's heap after a full
 * collection is under {@link #HEAP_BOUND} and at most {@link #HEAP_GROWTH_BOUND} above what it was
 * before the run.
 *
 * <p>{@code -Dspb.load.jobs=10 -Dspb.load.viewers=50} runs it smaller. A summary goes to standard
 * output ({@code target/failsafe-reports/*LoadAbuseIT-output.txt}); the processes' own logs stay in
 * {@code target/load-abuse-logs}.
 */
@Timeout(value = 8, unit = TimeUnit.MINUTES)
@org.junit.jupiter.api.extension.ExtendWith(GatewayDiagnostics.class)
class LoadAbuseIT implements GatewayDiagnostics.RunsGateway {

  private static final int JOBS = Integer.getInteger("spb.load.jobs", 50);
  private static final int VIEWERS = Integer.getInteger("spb.load.viewers", 500);
  private static final int RUNNERS = 2;
  private static final String REPO = "load";
  private static final String PREFIX = "line-";
  private static final int LINES = 300;
  private static final int LIMIT_LINES = 20;

  /**
   * Long enough for the first job to wait for the last container to start, and still print and
   * push: on an idle two-core machine the fiftieth job runs about 20 s after the first, but twice
   * that while other builds share the CPU, and the proposal jobs then print for another 20 s.
   */
  private static final String WALL_LIMIT = "120s";

  /**
   * The most the gateway's heap may hold after a full collection once the run is over (of its 256
   * MiB).
   */
  private static final long HEAP_BOUND = 64L << 20;

  /**
   * How much more than before the run it may hold then: what the finished jobs' records and logs
   * take.
   */
  private static final long HEAP_GROWTH_BOUND = 24L << 20;

  private static final Duration START_DEADLINE = Duration.ofMinutes(2);
  private static final Duration END_DEADLINE = Duration.ofMinutes(3);

  /**
   * Where the processes' output and the gateway's GC log stay after the run, for a look when it
   * failed.
   */
  private static final Path LOGS = Path.of("target", "load-abuse-logs");

  /**
   * Where the slow-loris comes from: another client than the viewers' and the bad requests'
   * 127.0.0.1.
   */
  private static final String SLOW_SOURCE = "127.0.0.2";

  private static final int SLOW_HEADS = 300;

  /** The gateway's request-head timeout, its default. */
  private static final Duration HEAD_TIMEOUT = Duration.ofSeconds(10);

  /**
   * What one job's JSON may take whatever the job pushed (32 refs of at most 200 characters, and
   * the rest).
   */
  private static final int JOB_JSON_BOUND = 16 << 10;

  private static final Pattern RUNNER_HEALTH =
      Pattern.compile("runner health on (http://\\S+/healthz)");

  /**
   * Holds a job until the test pushes the branch {@code go}, through the runner's git relay like
   * any fetch.
   */
  private static final String AWAIT_GO =
      "until git ls-remote --exit-code origin refs/heads/go > /dev/null 2>&1; do sleep 1; done; ";

  /**
   * What the delta-bomb job prints before the number of its bombs the gateway refused naming the
   * limit.
   */
  private static final String BOMBS_REFUSED = "delta-bombs-refused-";

  /** What a job does once released, how many numbered lines it prints, and how it must end. */
  private enum Kind {
    PROPOSAL(
        LINES,
        "ok",
        FaultChecks.numberedLines(PREFIX, LINES, 15, "1") + "; echo \"$SPB_JOB_ID\" > load.txt"),
    TIMEOUT(
        LIMIT_LINES,
        "timeout",
        FaultChecks.numberedLines(PREFIX, LIMIT_LINES, LIMIT_LINES, "0") + "; sleep 600"),
    OOM(
        LIMIT_LINES,
        "oom",
        FaultChecks.numberedLines(PREFIX, LIMIT_LINES, LIMIT_LINES, "0")
            + "; head -c 600m /dev/zero | tail > /dev/null"),
    DISK(
        LIMIT_LINES,
        "disk_limit",
        FaultChecks.numberedLines(PREFIX, LIMIT_LINES, LIMIT_LINES, "0")
            + "; dd if=/dev/zero of=/work/fill bs=1M count=64"),
    /**
     * A ref flood from inside the sandbox, through the runner's git relay: a push of 2,500 refs
     * with 190-character names and one of 1,000 (as many as a command line holds) with
     * 830-character names. The gate admits the first 32 and refuses the rest, so the job's own
     * proposal is then a 33rd ref, refused too: the job ends with the entrypoint's push failure.
     * Two pushes, not more: each takes a job of a quarter CPU about ten seconds on an idle machine,
     * and the job must end within the wall clock limit while fifty others compete for the CPU.
     */
    REF_FLOOD(
        LIMIT_LINES,
        "exit_code:93",
        FaultChecks.numberedLines(PREFIX, LIMIT_LINES, LIMIT_LINES, "0")
            + "; for n in 150 790; do count=$([ $n -gt 200 ] && echo 1000 || echo 2500); pad=$(printf \"%0${n}d\" 0); "
            + "git push -q origin $(seq -f \"HEAD:refs/agents/$SPB_JOB_ID/f$n-%g-$pad\" 1 $count) > /tmp/push 2>&1;"
            + " echo \"flood push of $count: exit $?, $(grep -c 'rejected\\|error' /tmp/push) refusals, "
            + "$(grep -m1 -o 'over the limit[^)]*\\|at most 200' /tmp/push)\"; "
            + "done; echo \"$SPB_JOB_ID\" > load.txt"),
    /**
     * Four delta bombs at once from inside the sandbox, through the runner's git relay: each a 13
     * KB receive-pack that inflates to 9.6 GB, which the test leaves for this job in the {@code go}
     * branch. The gateway refuses each one naming its inflated-size limit; the job then pushes its
     * proposal as the others do.
     */
    DELTA_BOMB(
        LIMIT_LINES,
        "ok",
        FaultChecks.numberedLines(PREFIX, LIMIT_LINES, LIMIT_LINES, "0")
            + "; git fetch -q origin go && git show \"FETCH_HEAD:bombs/$SPB_JOB_ID\" > /tmp/bomb"
            + " && url=$(git remote get-url origin) && for i in 1 2 3 4; do curl -s --noproxy '*' -o /tmp/answer-$i --data-binary"
            + " @/tmp/bomb -H 'Content-Type: application/x-git-receive-pack-request' \"$url/git-receive-pack\" & done;"
            + " wait; echo \""
            + BOMBS_REFUSED
            + "$(grep -l -a SPB_MAX_PUSH_INFLATED_BYTES /tmp/answer-* | wc -l)\";"
            + " echo \"bomb answer: $url $(head -c 400 /tmp/answer-1 | tr -c '[:print:]' '.')\";"
            + " echo \"$SPB_JOB_ID\" > load.txt");

    final int lines;
    final String exitReason;
    final String command;

    Kind(int lines, String exitReason, String command) {
      this.lines = lines;
      this.exitReason = exitReason;
      this.command = AWAIT_GO + command;
    }
  }

  /** One websocket viewer and the numbered lines it got. */
  private record Watch(String jobId, Kind kind, LogViewer viewer, List<String> lines) {}

  @TempDir Path tmp;
  private NatsServer nats;
  private GatewayProcess gateway;

  @Override
  public GatewayProcess gateway() {
    return gateway;
  }

  private final Map<String, RunnerProcess> runners = new LinkedHashMap<>();
  private BadRequestStream abuse;
  private SlowHeads slowHeads;
  private final Map<String, URI> runnerHealth = new LinkedHashMap<>();

  /** How long each job creation took to answer, in milliseconds. */
  private final List<Long> createMillis = Collections.synchronizedList(new ArrayList<>());

  private GitCli git;
  private Path seed;
  private String mainSha;
  private final ExecutorService viewerThreads =
      Executors.newFixedThreadPool(
          4,
          r -> {
            Thread t = new Thread(r, "log-viewers");
            t.setDaemon(true);
            return t;
          });
  private final HttpClient viewerClient =
      HttpClient.newBuilder()
          .version(HttpClient.Version.HTTP_1_1)
          .connectTimeout(Duration.ofSeconds(30))
          .executor(viewerThreads)
          .build();

  @BeforeEach
  void start() throws Exception {
    JobTestBed.requireDocker();
    nats = NatsServer.start(tmp.resolve("nats"));
    deleteLogsOfTheLastRun();
    gateway =
        GatewayProcess.start(
            tmp.resolve("gateway"),
            LOGS,
            Map.of("SPB_NATS_URL", nats.url(), "SPB_JOB_WALL_LIMIT", WALL_LIMIT));
    startRunners();
    HttpResponse<String> created =
        gateway.api("POST", "/api/v1/repos", "{\"name\":\"" + REPO + "\"}");
    assertEquals(201, created.statusCode(), created.body());
    git = new GitCli(Files.createDirectories(tmp.resolve("home")));
    seed = git.workTree(tmp, "work");
    git.ok(seed, "push", "-q", pushUrl(), "main");
    mainSha = git.ok(seed, "rev-parse", "HEAD").output().strip();
  }

  /**
   * Starts the runners side by side; each one that started is closed after the test, even if
   * another did not.
   */
  private void startRunners() throws Exception {
    Map<String, CompletableFuture<RunnerProcess>> starting = new LinkedHashMap<>();
    for (int i = 0; i < RUNNERS; i++) {
      Map<String, String> env = runnerEnv(FaultChecks.uniqueRunnerId("load-" + (char) ('a' + i)));
      starting.put(
          env.get("SPB_RUNNER_ID"),
          CompletableFuture.supplyAsync(
              () -> {
                try {
                  return RunnerProcess.start(env, LOGS);
                } catch (Exception e) {
                  throw new IllegalStateException(
                      "runner " + env.get("SPB_RUNNER_ID") + " did not start", e);
                }
              }));
    }
    Exception failed = null;
    for (var runner : starting.entrySet()) {
      try {
        runners.put(runner.getKey(), runner.getValue().get(150, TimeUnit.SECONDS));
      } catch (Exception e) {
        failed = failed == null ? e : failed;
      }
    }
    if (failed != null) {
      throw failed;
    }
    for (var runner : runners.entrySet()) {
      gateway.registerRunner(runner.getKey(), runner.getValue().publicKey());
      Matcher health = RUNNER_HEALTH.matcher(runner.getValue().log());
      assertTrue(health.find(), runner.getValue().log());
      runnerHealth.put(runner.getKey(), URI.create(health.group(1)));
    }
  }

  private static void deleteLogsOfTheLastRun() throws java.io.IOException {
    if (Files.isDirectory(LOGS)) {
      try (var files = Files.list(LOGS)) {
        for (Path file : files.toList()) {
          Files.delete(file);
        }
      }
    }
  }

  private String pushUrl() throws Exception {
    return gateway.baseUrl().replace("http://", "http://owner:" + gateway.ownerToken() + "@")
        + "/"
        + REPO
        + ".git";
  }

  private Map<String, String> runnerEnv(String id) {
    Map<String, String> env = new HashMap<>();
    env.put("SPB_NATS_URL", nats.url());
    env.put("SPB_RUNNER_ID", id);
    env.put("SPB_AGENT_IMAGE", JobTestBed.IMAGE);
    env.put("SPB_RUNNER_WORK_DIR", tmp.resolve("runner-" + id).toString());
    env.put("SPB_RUNNER_SLOTS", String.valueOf((JOBS + RUNNERS - 1) / RUNNERS));
    env.put("SPB_LIMIT_CPUS", "0.25");
    env.put("SPB_LIMIT_MEMORY", "64m");
    env.put("SPB_LIMIT_PIDS", "64");
    env.put("SPB_LIMIT_DISK", "16m");
    env.put("SPB_RUNNER_HEALTH", "127.0.0.1:0");
    env.put("SPB_GATEWAY_KEYS", gateway.jobBusKeys().toString());
    return env;
  }

  @AfterEach
  void stop() throws Exception {
    if (abuse != null) {
      abuse.close();
    }
    if (slowHeads != null) {
      slowHeads.close();
    }
    for (RunnerProcess runner : runners.values()) {
      runner.close();
    }
    if (gateway != null) {
      gateway.close();
    }
    if (nats != null) {
      nats.close();
    }
    // Only if an assertion failed before they were all gone: nothing of this run may stay on the
    // shared engine.
    try (DockerSandbox docker = new DockerSandbox("unix:///var/run/docker.sock")) {
      for (String id : runners.keySet()) {
        containersOf(id).forEach(c -> docker.remove(c.getId()));
      }
    }
    viewerThreads.shutdownNow();
  }

  @Test
  void fiftyJobsFiveHundredViewersAndBadRequestsAllEndAsTheyShould() throws Exception {
    long heapBefore = gateway.heapAfterFullGc();
    Files.writeString(LOGS.resolve("gateway-heap-before.txt"), gateway.jcmd("GC.class_histogram"));
    long begun = System.nanoTime();
    List<Kind> plan = plan();
    Map<String, Kind> kinds = Collections.synchronizedMap(new LinkedHashMap<>());
    List<Watch> watches = Collections.synchronizedList(new ArrayList<>());

    // The first job is the one the bad requests aim at; the stream runs from then until every job
    // has ended.
    String first = submitAndWatch(plan.get(0), viewersOf(0), kinds, watches);
    abuse = BadRequestStream.start(target(first), 2, Duration.ofMillis(20));
    // A slow-loris from another address for the whole run: heads that never finish, each cut by the
    // head timeout.
    slowHeads =
        SlowHeads.open(
            SLOW_SOURCE,
            URI.create(gateway.baseUrl()).getPort(),
            SLOW_HEADS,
            Duration.ofSeconds(10));
    ExecutorService submitters = Executors.newFixedThreadPool(8);
    try {
      List<Future<String>> submitted = new ArrayList<>();
      for (int i = 1; i < plan.size(); i++) {
        Kind kind = plan.get(i);
        int viewers = viewersOf(i);
        submitted.add(submitters.submit(() -> submitAndWatch(kind, viewers, kinds, watches)));
      }
      for (Future<String> f : submitted) {
        f.get(2, TimeUnit.MINUTES);
      }
    } finally {
      submitters.shutdownNow();
    }
    long allSubmitted = System.nanoTime();

    double allStarted = awaitAllStarted(kinds.keySet());
    Map<String, Integer> runningAtOnce = runningJobs();
    pushGo(kinds);
    long released = System.nanoTime();
    Map<String, JsonObject> jobs = awaitAllFinished(kinds.keySet());
    long allFinished = System.nanoTime();
    List<String> incomplete = awaitViewers(watches, jobs);
    abuse.close();
    boolean slowHeadsCut = slowHeads.awaitAllClosed(HEAD_TIMEOUT.plusSeconds(10));
    long viewersDone = System.nanoTime();

    long heapAfterGc = gateway.heapAfterFullGc();
    Files.writeString(LOGS.resolve("gateway-heap-after.txt"), gateway.jcmd("GC.class_histogram"));
    long heapPeak =
        GcLog.pauses(gateway.gcLog()).stream().mapToLong(GcLog.Pause::before).max().orElse(0);
    System.out.printf(
        Locale.ROOT,
        "load and abuse: %d jobs on %d runners, %d viewers; submitted in %.1f s, all "
            + "running %.1f s later (runners: %s), all finished %.1f s after their release, viewers done %.1f s "
            + "after the first job was submitted%n",
        JOBS,
        RUNNERS,
        watches.size(),
        seconds(begun, allSubmitted),
        allStarted,
        runningAtOnce,
        seconds(released, allFinished),
        seconds(begun, viewersDone));
    List<Long> creates = createMillis.stream().sorted().toList();
    System.out.printf(
        Locale.ROOT,
        "job creation answered in %d ms (median), %d ms at most%n",
        creates.get(creates.size() / 2),
        creates.get(creates.size() - 1));
    System.out.printf(
        Locale.ROOT,
        "gateway heap after a full GC: %.1f MiB before the run, %.1f MiB after it "
            + "(bounds: %d MiB, %d MiB more than before); peak %.1f MiB of 256%n",
        heapBefore / 1048576.0,
        heapAfterGc / 1048576.0,
        HEAP_BOUND >> 20,
        HEAP_GROWTH_BOUND >> 20,
        heapPeak / 1048576.0);
    System.out.printf(
        Locale.ROOT,
        "bad requests: %d sent (%d kinds), by status %s; viewers reconnected %d times, "
            + "told to resume %d times%n",
        abuse.sent(),
        abuse.probeCount(),
        abuse.countsByStatus(),
        watches.stream().mapToInt(w -> w.viewer().connects() - 1).sum(),
        watches.stream().mapToInt(w -> w.viewer().resumes()).sum());

    assertEquals(
        JOBS,
        runningAtOnce.values().stream().mapToInt(Integer::intValue).sum(),
        "jobs running at once, by runner: " + runningAtOnce);
    assertEverythingAlive();
    assertJobsEnded(kinds, jobs);
    assertTrue(
        incomplete.isEmpty(),
        incomplete.size()
            + " of "
            + watches.size()
            + " viewers did not get their "
            + "job exactly: "
            + incomplete.subList(0, Math.min(10, incomplete.size())));
    assertAudited(kinds);
    assertBadRequestsRefused();
    assertTrue(
        slowHeadsCut && slowHeads.held() == 0 && slowHeads.failedToConnect() == 0,
        "every slow head was cut: "
            + slowHeads.closed()
            + " closed, "
            + slowHeads.held()
            + " held, "
            + slowHeads.failedToConnect()
            + " could not connect");
    assertTrue(
        slowHeads.longestBeforeClose().compareTo(HEAD_TIMEOUT.plusSeconds(5)) <= 0,
        "a slow head was held "
            + slowHeads.longestBeforeClose()
            + ", more than the head timeout "
            + HEAD_TIMEOUT);
    assertFloodBounded(kinds, jobs);
    for (String id : runners.keySet()) {
      JobTestBed.awaitCondition(
          "no container of runner " + id + " is left",
          Duration.ofSeconds(30),
          () -> containersOf(id).isEmpty());
    }
    assertTrue(
        heapAfterGc < HEAP_BOUND && heapAfterGc - heapBefore < HEAP_GROWTH_BOUND,
        "the gateway holds "
            + (heapAfterGc >> 20)
            + " MiB after a full GC, "
            + (heapBefore >> 20)
            + " MiB before the run");
  }

  /**
   * Releases the jobs: pushes {@code go}, a commit on main that holds each delta-bomb job's bomb, a
   * receive-pack body for a ref in that job's own namespace.
   */
  private void pushGo(Map<String, Kind> kinds) throws Exception {
    Path bombs = Files.createDirectories(seed.resolve("bombs"));
    for (var entry : kinds.entrySet()) {
      if (entry.getValue() == Kind.DELTA_BOMB) {
        Files.write(
            bombs.resolve(entry.getKey()),
            DeltaBomb.receivePackBody("refs/agents/" + entry.getKey() + "/bomb", "0".repeat(40)));
      }
    }
    git.ok(seed, "checkout", "-q", "-b", "go");
    git.ok(seed, "add", "bombs");
    git.ok(seed, "commit", "-q", "-m", "Release the load jobs");
    git.ok(seed, "push", "-q", pushUrl(), "go:refs/heads/go");
    git.ok(seed, "checkout", "-q", "main");
  }

  /**
   * The jobs to submit: the wall clock's first (it takes longest), the other limits next, then
   * proposals.
   */
  private static List<Kind> plan() {
    List<Kind> plan =
        new ArrayList<>(
            List.of(
                Kind.PROPOSAL, Kind.TIMEOUT, Kind.OOM, Kind.DISK, Kind.REF_FLOOD, Kind.DELTA_BOMB));
    while (plan.size() < JOBS) {
      plan.add(Kind.PROPOSAL);
    }
    return plan;
  }

  /** How many viewers follow the {@code index}-th job: the viewers spread evenly over the jobs. */
  private static int viewersOf(int index) {
    return VIEWERS / JOBS + (index < VIEWERS % JOBS ? 1 : 0);
  }

  /** Submits a job and attaches its viewers at once, before it has started. */
  private String submitAndWatch(
      Kind kind, int viewers, Map<String, Kind> kinds, List<Watch> watches) throws Exception {
    long sent = System.nanoTime();
    HttpResponse<String> r =
        gateway.api(
            "POST",
            "/api/v1/repos/" + REPO + "/agent-jobs",
            new JsonObject()
                .put("task", "load " + kind.name().toLowerCase())
                .put("exec", kind.command)
                .encode());
    createMillis.add((System.nanoTime() - sent) / 1_000_000);
    assertEquals(201, r.statusCode(), r.body());
    String id = new JsonObject(r.body()).getString("id");
    kinds.put(id, kind);
    for (int i = 0; i < viewers; i++) {
      List<String> lines = Collections.synchronizedList(new ArrayList<>());
      LogViewer viewer =
          new LogViewer(
              viewerClient,
              gateway.baseUrl(),
              REPO,
              id,
              gateway.ownerToken(),
              (stream, line, arrival, published) -> {
                if (stream.equals("stdout") && line.startsWith(PREFIX)) {
                  lines.add(line);
                }
              });
      watches.add(new Watch(id, kind, viewer, lines));
      viewer.start();
    }
    return id;
  }

  private BadRequestStream.Target target(String jobId) throws Exception {
    String jobToken = jobToken(REPO, 3600);
    String otherRepo = jobToken("other", 3600);
    String expired = jobToken(REPO, 1);
    Thread.sleep(1500);
    return new BadRequestStream.Target(
        gateway.baseUrl(),
        gateway.ownerToken(),
        REPO,
        jobId,
        mainSha,
        jobToken,
        otherRepo,
        expired);
  }

  /** A job token for a job that does not exist, minted through the API. */
  private String jobToken(String repo, long ttl) throws Exception {
    HttpResponse<String> r =
        gateway.api(
            "POST",
            "/api/v1/job-tokens",
            new JsonObject().put("repo", repo).put("job", "abuse-probe").put("ttl", ttl).encode());
    assertEquals(201, r.statusCode(), r.body());
    return new JsonObject(r.body()).getString("token");
  }

  /**
   * Waits until every job's container runs; returns how long that took. No job can end before it is
   * released.
   */
  private double awaitAllStarted(java.util.Set<String> ids) throws Exception {
    long start = System.nanoTime();
    Map<String, JsonObject> jobs = jobs();
    while (jobs.values().stream().filter(j -> "started".equals(j.getString("status"))).count()
        < ids.size()) {
      jobs.values().stream()
          .filter(j -> "finished".equals(j.getString("status")))
          .findFirst()
          .ifPresent(j -> fail("a job ended before it was released: " + j.encodePrettily()));
      if (System.nanoTime() - start > START_DEADLINE.toNanos()) {
        fail(
            "not every job started within "
                + START_DEADLINE
                + ": "
                + jobs.values().stream()
                    .filter(j -> !"started".equals(j.getString("status")))
                    .limit(5)
                    .map(JsonObject::encode)
                    .toList());
      }
      Thread.sleep(500);
      jobs = jobs();
    }
    return seconds(start, System.nanoTime());
  }

  /**
   * The jobs each runner says it runs now, by runner; -1 for a runner whose health check does not
   * answer 200.
   */
  private Map<String, Integer> runningJobs() throws Exception {
    HttpClient http = HttpClient.newHttpClient();
    Map<String, Integer> running = new LinkedHashMap<>();
    for (var health : runnerHealth.entrySet()) {
      HttpResponse<String> r =
          http.send(
              HttpRequest.newBuilder(health.getValue()).timeout(Duration.ofSeconds(10)).build(),
              HttpResponse.BodyHandlers.ofString());
      running.put(
          health.getKey(),
          r.statusCode() == 200 ? new JsonObject(r.body()).getInteger("running_jobs") : -1);
    }
    return running;
  }

  private Map<String, JsonObject> awaitAllFinished(java.util.Set<String> ids) throws Exception {
    long deadline = System.nanoTime() + END_DEADLINE.toNanos();
    Map<String, JsonObject> jobs = jobs();
    while (jobs.values().stream().filter(j -> "finished".equals(j.getString("status"))).count()
        < ids.size()) {
      if (System.nanoTime() > deadline) {
        fail(
            "not every job finished within "
                + END_DEADLINE
                + ": "
                + jobs.values().stream()
                    .filter(j -> !"finished".equals(j.getString("status")))
                    .limit(5)
                    .map(JsonObject::encode)
                    .toList());
      }
      Thread.sleep(1000);
      jobs = jobs();
    }
    return jobs;
  }

  /** The repository's jobs, by id. */
  private Map<String, JsonObject> jobs() throws Exception {
    HttpResponse<String> r = gateway.api("GET", "/api/v1/repos/" + REPO + "/agent-jobs", null);
    assertEquals(200, r.statusCode(), r.body());
    return new JsonArray(r.body())
        .stream()
            .map(JsonObject.class::cast)
            .collect(Collectors.toMap(j -> j.getString("id"), j -> j));
  }

  /**
   * Waits for every viewer's end frame, then describes each viewer that did not get exactly its
   * job's numbered lines, in order, each once (no chunk missing, none sent twice), and an end frame
   * with the job's exit reason.
   */
  private static List<String> awaitViewers(List<Watch> watches, Map<String, JsonObject> jobs)
      throws Exception {
    try {
      CompletableFuture.allOf(
              watches.stream().map(w -> w.viewer().end()).toArray(CompletableFuture[]::new))
          .get(90, TimeUnit.SECONDS);
    } catch (java.util.concurrent.TimeoutException e) {
      // Described below, viewer by viewer.
    }
    List<String> problems = new ArrayList<>();
    for (Watch w : watches) {
      List<String> expected =
          IntStream.rangeClosed(1, w.kind().lines).mapToObj(n -> PREFIX + n).toList();
      String reason = jobs.get(w.jobId()).getString("exit_reason");
      if (!w.viewer().end().isDone()) {
        problems.add(
            w.jobId()
                + ": no end frame after "
                + w.lines().size()
                + " lines, "
                + w.viewer().connects()
                + " connections");
      } else if (!reason.equals(w.viewer().end().join().getString("exit_reason"))
          || !"finished".equals(w.viewer().end().join().getString("status"))) {
        problems.add(
            w.jobId()
                + ": end frame "
                + w.viewer().end().join().encode()
                + ", the job ended "
                + reason);
      } else if (!expected.equals(List.copyOf(w.lines()))
          || w.viewer().gaps() != 0
          || w.viewer().duplicates() != 0) {
        problems.add(
            w.jobId()
                + ": "
                + w.lines().size()
                + " of "
                + expected.size()
                + " lines, "
                + w.viewer().gaps()
                + " missing and "
                + w.viewer().duplicates()
                + " repeated chunks, first lines "
                + w.lines().subList(0, Math.min(3, w.lines().size())));
      }
    }
    return problems;
  }

  private void assertEverythingAlive() throws Exception {
    assertTrue(gateway.isAlive(), "the gateway is alive");
    assertEquals(200, gateway.api("GET", "/healthz", null).statusCode());
    HttpResponse<String> ready = gateway.api("GET", "/readyz", null);
    assertEquals(200, ready.statusCode(), ready.body());
    for (var runner : runners.entrySet()) {
      assertTrue(
          runner.getValue().isAlive(),
          "runner " + runner.getKey() + " is alive:\n" + runner.getValue().log());
    }
    JobTestBed.awaitCondition(
        "the runners are healthy with no job left",
        Duration.ofSeconds(30),
        () -> runningJobs().values().stream().allMatch(n -> n == 0));
    StringBuilder logs = new StringBuilder(gateway.log());
    for (RunnerProcess runner : runners.values()) {
      logs.append(runner.log());
    }
    assertFalse(logs.toString().contains("OutOfMemoryError"), "a process ran out of memory");
    assertFalse(
        gateway.log().contains("request failed"),
        "the gateway answered a request with a server error:\n"
            + gateway
                .log()
                .lines()
                .filter(l -> l.contains("request failed"))
                .limit(5)
                .collect(Collectors.joining("\n")));
  }

  private void assertJobsEnded(Map<String, Kind> kinds, Map<String, JsonObject> jobs)
      throws Exception {
    assertEquals(kinds.keySet(), jobs.keySet(), "the repository's jobs are the ones submitted");
    for (var entry : kinds.entrySet()) {
      JsonObject job = jobs.get(entry.getKey());
      Kind kind = entry.getValue();
      String log =
          gateway
              .api("GET", "/api/v1/repos/" + REPO + "/agent-jobs/" + entry.getKey() + "/log", null)
              .body();
      assertEquals(
          kind.exitReason,
          job.getString("exit_reason"),
          () ->
              job.encodePrettily()
                  + "\nits log ends:\n"
                  + log.substring(Math.max(0, log.length() - 3000)));
      if (kind == Kind.PROPOSAL || kind == Kind.DELTA_BOMB) {
        assertNotNull(job.getString("proposal_sha"), "a proposal: " + job.encodePrettily());
      } else {
        assertNull(job.getString("proposal_sha"), "no proposal: " + job.encodePrettily());
      }
      FaultChecks.assertEachLineOnce(
          log, PREFIX, kind.lines, "the gateway's log of job " + entry.getKey());
      if (kind == Kind.DELTA_BOMB) {
        assertTrue(
            log.contains(BOMBS_REFUSED + "4"),
            "the gateway refused all four bombs naming the limit:\n"
                + log.lines()
                    .filter(l -> l.contains(BOMBS_REFUSED) || l.contains("bomb"))
                    .toList());
      }
    }
  }

  /**
   * Each job's audit events once, nothing for a job that was not submitted, and the chain verifies.
   */
  private void assertAudited(Map<String, Kind> kinds) throws Exception {
    HttpResponse<String> r = gateway.api("GET", "/api/v1/agent-jobs", null);
    assertEquals(200, r.statusCode(), r.body());
    Map<String, List<String>> events =
        new JsonArray(r.body())
            .stream()
                .map(JsonObject.class::cast)
                .filter(e -> e.getString("job") != null)
                .collect(
                    Collectors.groupingBy(
                        e -> e.getString("job"),
                        Collectors.mapping(e -> e.getString("event"), Collectors.toList())));
    assertEquals(kinds.keySet(), events.keySet(), "the audited jobs are the ones submitted");
    for (var entry : kinds.entrySet()) {
      List<String> jobEvents = events.get(entry.getKey());
      if (entry.getValue() == Kind.PROPOSAL
          || entry.getValue() == Kind.REF_FLOOD
          || entry.getValue() == Kind.DELTA_BOMB) {
        // The flood's one admitted push is its refs_written; every refused push recorded nothing.
        FaultChecks.assertPushedJobAuditedOnce(jobEvents);
      } else {
        assertEquals(
            List.of("job_created", "job_dispatched", "job_started", "job_finished"),
            jobEvents,
            entry.getKey() + " (" + entry.getValue() + ")");
      }
    }
    AuditChain.Result chain = AuditLog.verify(gateway.auditLog());
    assertTrue(chain.ok(), chain.message());
  }

  /**
   * The flood left 32 bounded refs: its job's JSON, the job lists and every clone's ref
   * advertisement stay small, and its one audit entry of refs is bounded too.
   */
  private void assertFloodBounded(Map<String, Kind> kinds, Map<String, JsonObject> jobs)
      throws Exception {
    for (var entry : kinds.entrySet()) {
      if (entry.getValue() != Kind.REF_FLOOD) {
        continue;
      }
      JsonObject job = jobs.get(entry.getKey());
      assertEquals(32, job.getJsonArray("refs_written").size(), job.encodePrettily());
      String one =
          gateway
              .api("GET", "/api/v1/repos/" + REPO + "/agent-jobs/" + entry.getKey(), null)
              .body();
      assertTrue(
          one.length() < JOB_JSON_BOUND, "the flooded job's JSON is " + one.length() + " bytes");
      String audit = gateway.api("GET", "/api/v1/agent-jobs?job=" + entry.getKey(), null).body();
      assertTrue(
          audit.length() < JOB_JSON_BOUND,
          "the flooded job's audit entries are " + audit.length() + " bytes");
    }
    int others = (int) kinds.values().stream().filter(k -> k != Kind.REF_FLOOD).count();
    String all = gateway.api("GET", "/api/v1/jobs", null).body();
    assertTrue(
        all.length() < JOB_JSON_BOUND + others * 4096,
        "GET /api/v1/jobs is " + all.length() + " bytes");
    String refs =
        gateway.api("GET", "/" + REPO + ".git/info/refs?service=git-upload-pack", null).body();
    assertTrue(
        refs.length() < JOB_JSON_BOUND + others * 256,
        "the ref advertisement is " + refs.length() + " bytes");
  }

  private void assertBadRequestsRefused() throws Exception {
    assertEquals(
        0,
        abuse.violationCount(),
        abuse.violationCount()
            + " bad requests were not refused as they "
            + "should be: "
            + abuse.violations());
    assertEquals(
        abuse.probeCount(), abuse.countsByProbe().size(), "every kind of bad request was sent");
    assertTrue(
        abuse.countsByProbe().values().stream().allMatch(n -> n >= 2),
        abuse.countsByProbe().toString());
    assertTrue(abuse.refusedPushes() > 0, "the refused push was tried");
    String refs =
        gateway.api("GET", "/" + REPO + ".git/info/refs?service=git-upload-pack", null).body();
    assertFalse(refs.contains("refs/heads/abuse"), "a bad request wrote a ref:\n" + refs);
  }

  private static List<Container> containersOf(String runnerId) throws Exception {
    try (DockerSandbox docker = new DockerSandbox("unix:///var/run/docker.sock")) {
      return docker
          .client()
          .listContainersCmd()
          .withShowAll(true)
          .withLabelFilter(Map.of(SandboxSpec.RUNNER_LABEL, runnerId))
          .exec();
    }
  }

  private static double seconds(long fromNanos, long toNanos) {
    return (toNanos - fromNanos) / 1e9;
  }
}
