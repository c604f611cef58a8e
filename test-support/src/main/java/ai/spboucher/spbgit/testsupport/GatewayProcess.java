package ai.spboucher.spbgit.testsupport;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The gateway as its own operating-system process, from the packaged {@code spb-gateway.jar} (built
 * by {@code package} before failsafe runs), which a test can kill with SIGKILL mid-write and start
 * again on the same data directory and port: jobs already running keep reaching it at the clone URL
 * they were given. Each start writes a GC log next to its output, for what its heap held.
 */
public final class GatewayProcess implements AutoCloseable {

  public static final Path JAR = Path.of("..", "gateway-verticle", "target", "spb-gateway.jar");

  /**
   * A small heap and the client compiler: in the tests this is one of several JVMs sharing two
   * cores. Benchmarks pass none and measure the JVM's defaults, as an operator runs it.
   */
  public static final List<String> TEST_JVM =
      List.of("-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1");

  private static final Duration READY_TIMEOUT = Duration.ofSeconds(60);

  private final Path jar;
  private final List<String> jvmOptions;
  private final Path dataDir;
  private final Path logDir;
  private final int port;
  private final Map<String, String> env;
  private HttpClient http;
  private JvmProcess process;
  private Path gcLog;
  private int starts;

  private GatewayProcess(
      Path jar,
      List<String> jvmOptions,
      Path dataDir,
      Path logDir,
      int port,
      Map<String, String> env) {
    this.jar = jar;
    this.jvmOptions = List.copyOf(jvmOptions);
    this.dataDir = dataDir;
    this.logDir = logDir;
    this.port = port;
    this.env = Map.copyOf(env);
  }

  /**
   * Starts the gateway on a free port with {@code env} (its {@code SPB_*} settings) and waits until
   * it is ready.
   */
  public static GatewayProcess start(Path dataDir, Path logDir, Map<String, String> env)
      throws Exception {
    return start(JAR, TEST_JVM, dataDir, logDir, env);
  }

  /**
   * Starts {@code jar} in a JVM with {@code jvmOptions}, like {@link #start(Path, Path, Map)};
   * stops it again if it does not become ready.
   */
  public static GatewayProcess start(
      Path jar, List<String> jvmOptions, Path dataDir, Path logDir, Map<String, String> env)
      throws Exception {
    if (!Files.isRegularFile(jar)) {
      throw new IllegalStateException(
          jar.toAbsolutePath()
              + " is missing: run the tests with mvn verify (or build it with mvn -B -o -q -pl"
              + " gateway-verticle -am package -DskipTests)");
    }
    GatewayProcess gateway =
        new GatewayProcess(
            jar,
            jvmOptions,
            Files.createDirectories(dataDir),
            Files.createDirectories(logDir),
            NatsServerProcess.freePort(),
            env);
    try {
      gateway.restart();
    } catch (Exception e) {
      gateway.close();
      throw e;
    }
    return gateway;
  }

  /**
   * Starts the process (again) and waits until it listens and, given {@code SPB_NATS_URL}, is
   * connected to NATS.
   */
  public void restart() throws Exception {
    if (process != null && process.isAlive()) {
      throw new IllegalStateException("the gateway process is still running");
    }
    // A fresh client for each start: none of its connections, or of their state, outlives the
    // process it
    // spoke to (the JDK client once hung for minutes, its timeout not firing, on the first request
    // after a
    // SIGKILL under a burst). HTTP/1.1: no cleartext HTTP/2 upgrade in between.
    http =
        HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5))
            .build();
    gcLog = logDir.resolve("gateway-" + (++starts) + "-gc.log");
    List<String> options = new ArrayList<>(jvmOptions);
    options.add("-Xlog:gc:file=" + gcLog);
    Map<String, String> all = new HashMap<>(env);
    all.put("SPB_DATA_DIR", dataDir.toString());
    all.put("SPB_HTTP_PORT", String.valueOf(port));
    boolean withNats = env.containsKey("SPB_NATS_URL");
    process =
        JvmProcess.start(
            "the gateway",
            jar,
            options,
            all,
            logDir.resolve("gateway-" + starts + ".log"),
            READY_TIMEOUT,
            log ->
                log.contains("listening on http://127.0.0.1:" + port)
                    && (!withNats || log.contains("connected to NATS")));
  }

  /** SIGKILL: no shutdown hook runs, an append in progress stops wherever it is. */
  public void kill() throws InterruptedException {
    process.kill();
  }

  public boolean isAlive() {
    return process != null && process.isAlive();
  }

  public long pid() {
    return process.pid();
  }

  /** Where each start's output and GC log go. */
  public Path logDir() {
    return logDir;
  }

  /** The GC log of the current (or last) start. */
  public Path gcLog() {
    return gcLog;
  }

  /**
   * Asks the running gateway for a full collection ({@code jcmd <pid> GC.run}) and returns how much
   * of its heap was still in use after it, in bytes, as its GC log reports.
   */
  public long heapAfterFullGc() throws Exception {
    int before = GcLog.pauses(gcLog).size();
    String out = jcmd("GC.run");
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (System.nanoTime() < deadline) {
      var pauses = GcLog.pauses(gcLog);
      for (var pause : pauses.subList(Math.min(before, pauses.size()), pauses.size())) {
        if (pause.full()) {
          return pause.after();
        }
      }
      Thread.sleep(100);
    }
    throw new IOException("no full collection in " + gcLog + " after jcmd GC.run: " + out);
  }

  /**
   * Runs a diagnostic command in the gateway's JVM ({@code jcmd <pid> <command>}); returns what it
   * printed.
   */
  public String jcmd(String... command) throws Exception {
    List<String> args =
        new ArrayList<>(
            List.of(
                Path.of(System.getProperty("java.home"), "bin", "jcmd").toString(),
                String.valueOf(process.pid())));
    args.addAll(List.of(command));
    Process jcmd = new ProcessBuilder(args).redirectErrorStream(true).start();
    String out = new String(jcmd.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (!jcmd.waitFor(60, TimeUnit.SECONDS) || jcmd.exitValue() != 0) {
      throw new IOException("jcmd " + String.join(" ", command) + " failed: " + out);
    }
    return out;
  }

  /** CPU time the gateway process has used so far, all its threads together. */
  public double cpuMillis() {
    return process.cpuMillis();
  }

  /** The clone URL of {@code repo}, with {@code token} as the Basic password when not null. */
  public String gitUrl(String repo, String token) {
    return (token == null ? baseUrl() : baseUrl().replace("http://", "http://test:" + token + "@"))
        + "/"
        + repo
        + ".git";
  }

  /** Creates {@code name} through the REST API. */
  public void createRepo(String name) throws Exception {
    created("/api/v1/repos", "{\"name\":\"" + name + "\"}");
  }

  /** A job token minted through the REST API, as the gateway mints one for each job. */
  public String jobToken(String repo, String job, long ttlSeconds) throws Exception {
    String body =
        created(
            "/api/v1/job-tokens",
            "{\"repo\":\"" + repo + "\",\"job\":\"" + job + "\",\"ttl\":" + ttlSeconds + "}");
    Matcher token = TOKEN.matcher(body);
    if (!token.find()) {
      throw new IOException("no token in " + body);
    }
    return token.group(1);
  }

  private static final Pattern TOKEN = Pattern.compile("\"token\"\\s*:\\s*\"([^\"]+)\"");

  private String created(String path, String body) throws Exception {
    HttpResponse<String> r = api("POST", path, body);
    if (r.statusCode() != 201) {
      throw new IOException("POST " + path + " answered " + r.statusCode() + ": " + r.body());
    }
    return r.body();
  }

  public String baseUrl() {
    return "http://127.0.0.1:" + port;
  }

  public String ownerToken() throws IOException {
    return Files.readString(dataDir.resolve("initial-owner-token")).strip();
  }

  public Path auditLog() {
    return dataDir.resolve("agent-jobs.jsonl");
  }

  /**
   * The gateway's job-bus public keys (current and retired), which a runner is given as {@code
   * SPB_GATEWAY_KEYS}; they exist once the gateway has started.
   */
  public Path jobBusKeys() {
    return dataDir.resolve("keys").resolve("job-bus");
  }

  /**
   * Authorizes a runner, as an operator does: copies its {@code runner-key.pub.pem} into the
   * gateway's runner keys as {@code <name>.pub.pem}. The gateway seals the tokens of the jobs it
   * queues from then on to it too, without a restart. Blocking.
   */
  public void registerRunner(String name, Path runnerPublicKey) throws IOException {
    Path runners = Files.createDirectories(dataDir.resolve("keys").resolve("runners"));
    Files.copy(
        runnerPublicKey, runners.resolve(name + ".pub.pem"), StandardCopyOption.REPLACE_EXISTING);
  }

  /** An API call with the owner token. */
  public HttpResponse<String> api(String method, String path, String body) throws Exception {
    HttpRequest.Builder request =
        HttpRequest.newBuilder(URI.create(baseUrl() + path))
            .timeout(Duration.ofSeconds(30))
            .header("Authorization", "Bearer " + ownerToken())
            .method(
                method,
                body == null
                    ? HttpRequest.BodyPublishers.noBody()
                    : HttpRequest.BodyPublishers.ofString(body, StandardCharsets.UTF_8));
    if (body != null) {
      request.header("Content-Type", "application/json");
    }
    // The timeout kept here too: should the client's own not fire, the test fails saying so instead
    // of hanging.
    try {
      return http.sendAsync(request.build(), HttpResponse.BodyHandlers.ofString())
          .get(40, TimeUnit.SECONDS);
    } catch (TimeoutException e) {
      throw new IOException(
          "no answer from the gateway to " + method + " " + path + " within 40 s", e);
    } catch (ExecutionException e) {
      throw e.getCause() instanceof Exception cause ? cause : e;
    }
  }

  /** What the current (or last) start printed. */
  public String log() throws IOException {
    return process == null ? "" : process.log();
  }

  @Override
  public void close() throws InterruptedException {
    if (process != null) {
      process.stop(Duration.ofSeconds(30));
    }
  }
}
