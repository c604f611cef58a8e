package ai.spboucher.spbgit.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.spboucher.spbgit.testsupport.GitCli;
import io.vertx.core.json.JsonObject;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What a push may cost after inflation: a 13 KB delta bomb, a deep delta chain, a slow push, a
 * client that hangs up and a token revoked mid-push, each against a real gateway, with its
 * repository checked on disk afterwards.
 */
class PushBoundsIT {

  private static final String RECEIVE_TYPE = "application/x-git-receive-pack-request";
  private static final String ZERO = PktLines.ZERO_ID;

  /** Room for every bomb, so only the bound under test stops it. */
  private static final JsonObject GENEROUS =
      new JsonObject().put("maxPushInflatedBytes", "1000g").put("pushTimeLimit", "30m");

  @TempDir Path tmp;
  private TestGateway gateway;
  private final List<Process> processes = new ArrayList<>();

  @AfterEach
  void stop() {
    if (gateway != null) {
      gateway.close();
    }
    processes.forEach(Process::destroyForcibly);
  }

  @Test
  void refusesTheDeltaBombWithinSecondsNamingTheLimit() throws Exception {
    gateway = TestGateway.start(tmp.resolve("data"));
    gateway.createRepo("demo");
    byte[] body = DeltaBomb.receivePackBody("refs/heads/bomb", ZERO);
    assertTrue(body.length < 20_000, "the bomb is small on the wire: " + body.length);
    String before = refsAndPacks("demo");

    long start = System.nanoTime();
    HttpResponse<byte[]> response = push(gateway.baseUrl, "demo", gateway.ownerToken, body);
    long seconds = TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - start);

    String answer = new String(response.body(), StandardCharsets.UTF_8);
    assertEquals(200, response.statusCode(), answer);
    assertTrue(
        answer.contains(
            "unpack error push exceeds the inflated size limit of 512 MiB"
                + " (SPB_MAX_PUSH_INFLATED_BYTES)"),
        answer);
    assertTrue(answer.contains("ng refs/heads/bomb"), answer);
    // Unbounded, the same push took 118 s of both cores; the bound leaves room for a busy machine.
    assertTrue(seconds < 30, "refused after " + seconds + " s");
    assertEquals(before, refsAndPacks("demo"), "no ref, pack or temporary file is left");
    assertEquals(200, gateway.api("GET", "/healthz", null, null).statusCode());
  }

  @Test
  void aGitClientSeesTheLimitAsARemoteLine() throws Exception {
    gateway =
        TestGateway.start(tmp.resolve("data"), new JsonObject().put("maxPushInflatedBytes", "64k"));
    gateway.createRepo("demo");
    GitCli git = new GitCli(Files.createDirectories(tmp.resolve("home")));
    Path work = git.workTree(tmp, "work");
    Files.write(work.resolve("big.bin"), new byte[100 << 10]);
    git.ok(work, "add", ".");
    git.ok(work, "commit", "-q", "-m", "a file larger than the limit once inflated");

    GitCli.Result pushed =
        git.run(work, "push", gateway.pushUrl("demo", gateway.ownerToken), "main");

    assertFalse(pushed.ok(), pushed.output());
    assertTrue(
        pushed
            .output()
            .contains(
                "remote: error: push exceeds the inflated size limit of 64 KiB (SPB_MAX_PUSH_INFLATED_BYTES)"),
        pushed.output());
    assertTrue(
        pushed
            .output()
            .contains("remote unpack failed: error push exceeds the inflated size limit"),
        pushed.output());
    assertEquals("", git.refs(gateway.repoDir("demo")));
  }

  @Test
  void refusesADeltaChainDeeperThanTheLimitAndTakesOneAtTheLimit() throws Exception {
    gateway = TestGateway.start(tmp.resolve("data"), new JsonObject().put("maxDeltaDepth", "10"));
    gateway.createRepo("demo");
    String before = refsAndPacks("demo");

    DeltaBomb.Pack deep = DeltaBomb.chain(11);
    HttpResponse<byte[]> refused =
        push(
            gateway.baseUrl,
            "demo",
            gateway.ownerToken,
            DeltaBomb.request("refs/heads/deep", ZERO, deep.blobId(), deep));
    String answer = new String(refused.body(), StandardCharsets.UTF_8);
    assertTrue(
        answer.contains(
            "unpack error push has a delta chain deeper than the limit of 10"
                + " (SPB_MAX_DELTA_DEPTH)"),
        answer);
    assertEquals(before, refsAndPacks("demo"));

    DeltaBomb.Pack atLimit = DeltaBomb.chain(10);
    HttpResponse<byte[]> taken =
        push(
            gateway.baseUrl,
            "demo",
            gateway.ownerToken,
            DeltaBomb.request("refs/heads/deep", ZERO, atLimit.blobId(), atLimit));
    assertTrue(
        new String(taken.body(), StandardCharsets.UTF_8).contains("ok refs/heads/deep"),
        new String(taken.body(), StandardCharsets.UTF_8));
  }

  @Test
  void stopsAPushAtItsTimeLimit() throws Exception {
    gateway = TestGateway.start(tmp.resolve("data"), GENEROUS.copy().put("pushTimeLimit", "2s"));
    gateway.createRepo("demo");
    String before = refsAndPacks("demo");

    long start = System.nanoTime();
    HttpResponse<byte[]> response =
        push(
            gateway.baseUrl,
            "demo",
            gateway.ownerToken,
            DeltaBomb.receivePackBody("refs/heads/bomb", ZERO));
    long seconds = TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - start);

    String answer = new String(response.body(), StandardCharsets.UTF_8);
    assertTrue(
        answer.contains("unpack error push exceeds the time limit of 2 s (SPB_PUSH_TIME_LIMIT)"),
        answer);
    assertTrue(seconds < 15, "stopped after " + seconds + " s");
    assertEquals(before, refsAndPacks("demo"));
  }

  @Test
  void aClientThatHangsUpStopsTheGatewaysWork() throws Exception {
    gateway = TestGateway.start(tmp.resolve("data"), GENEROUS);
    gateway.createRepo("demo");
    String before = refsAndPacks("demo");
    byte[] body = DeltaBomb.receivePackBody("refs/heads/bomb", ZERO);

    try (Socket socket = new Socket("127.0.0.1", gateway.verticle.actualPort())) {
      OutputStream out = socket.getOutputStream();
      out.write(
          ("POST /demo.git/git-receive-pack HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: "
                  + RECEIVE_TYPE
                  + "\r\nAuthorization: Basic "
                  + basic(gateway.ownerToken)
                  + "\r\nContent-Length: "
                  + body.length
                  + "\r\n\r\n")
              .getBytes(StandardCharsets.US_ASCII));
      out.write(body);
      out.flush();
      assertTrue(
          waitFor(Duration.ofSeconds(10), PushBoundsIT::jgitIsUnpacking),
          "the gateway unpacks the bomb");
    }
    long hungUp = System.nanoTime();

    assertTrue(
        waitFor(Duration.ofSeconds(3), () -> !jgitIsUnpacking()),
        "JGit still unpacking 3 s after the client hung up:\n" + unpackingStacks());
    System.out.println(
        "JGit stopped "
            + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - hungUp)
            + " ms after the client hung up");
    assertEquals(before, refsAndPacks("demo"));
    assertEquals(200, gateway.api("GET", "/healthz", null, null).statusCode());
  }

  @Test
  void revokingTheJobTokenStopsItsPush() throws Exception {
    gateway = TestGateway.start(tmp.resolve("data"), GENEROUS);
    gateway.createRepo("demo");
    String token = gateway.jobToken("demo", "bomber", 600);
    String before = refsAndPacks("demo");

    CompletableFuture<HttpResponse<byte[]>> pushing =
        CompletableFuture.supplyAsync(
            () -> {
              try {
                return push(
                    gateway.baseUrl,
                    "demo",
                    token,
                    DeltaBomb.receivePackBody("refs/agents/bomber/proposal", ZERO));
              } catch (Exception e) {
                throw new IllegalStateException(e);
              }
            });
    assertTrue(
        waitFor(Duration.ofSeconds(10), PushBoundsIT::jgitIsUnpacking),
        "the gateway unpacks the bomb");
    String jti = ForgedTokens.claimsOf(token).getString("jti");
    assertEquals(
        204,
        gateway.api("DELETE", "/api/v1/job-tokens/" + jti, gateway.ownerToken, null).statusCode());
    long revoked = System.nanoTime();

    HttpResponse<byte[]> response = pushing.get(30, TimeUnit.SECONDS);
    long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - revoked);
    String answer = new String(response.body(), StandardCharsets.UTF_8);
    assertTrue(answer.contains("unpack error push stopped: its job token was revoked"), answer);
    assertTrue(millis < 10_000, "answered " + millis + " ms after the revocation");
    assertFalse(jgitIsUnpacking());
    assertEquals(before, refsAndPacks("demo"));
  }

  /**
   * The incident: four bombs at once from one job, against a gateway with a 256 MiB heap and its
   * defaults.
   */
  @Test
  void fourBombsAtOnceLeaveASmallHeapedGatewayServing() throws Exception {
    Path data = tmp.resolve("data");
    int port = startJar(data, "-Xmx256m");
    String base = "http://127.0.0.1:" + port;
    String owner = Files.readString(data.resolve(DataDir.INITIAL_OWNER_TOKEN)).strip();
    HttpClient http = HttpClient.newHttpClient();
    HttpResponse<String> created =
        http.send(
            HttpRequest.newBuilder(URI.create(base + "/api/v1/repos"))
                .header("Authorization", "Bearer " + owner)
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString("{\"name\":\"demo\"}"))
                .build(),
            HttpResponse.BodyHandlers.ofString());
    assertEquals(201, created.statusCode(), created.body());

    long start = System.nanoTime();
    List<CompletableFuture<HttpResponse<byte[]>>> pushes = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      String ref = "refs/heads/bomb-" + i;
      pushes.add(
          CompletableFuture.supplyAsync(
              () -> {
                try {
                  return push(base, "demo", owner, DeltaBomb.receivePackBody(ref, ZERO));
                } catch (Exception e) {
                  throw new IllegalStateException(e);
                }
              }));
    }
    for (CompletableFuture<HttpResponse<byte[]>> p : pushes) {
      String answer = new String(p.get(150, TimeUnit.SECONDS).body(), StandardCharsets.UTF_8);
      assertTrue(
          answer.contains("unpack error push exceeds the inflated size limit of 512 MiB"), answer);
    }
    long seconds = TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - start);
    // Unbounded, each took over 100 s and together they ran the heap out; pushes unpack one at a
    // time here.
    assertTrue(seconds < 120, "four bombs took " + seconds + " s");
    assertEquals(
        200,
        http.send(
                HttpRequest.newBuilder(URI.create(base + "/healthz")).build(),
                HttpResponse.BodyHandlers.ofString())
            .statusCode());
    assertFalse(jarLog.toString().contains("OutOfMemoryError"), jarLog.toString());
    assertFalse(jarLog.toString().contains("Java heap space"), jarLog.toString());
    assertEquals(
        "",
        new GitCli(Files.createDirectories(tmp.resolve("home")))
            .refs(data.resolve("repos").resolve("demo.git")));
  }

  // ---- helpers ----

  private static HttpResponse<byte[]> push(String baseUrl, String repo, String token, byte[] body)
      throws Exception {
    HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    return http.send(
        HttpRequest.newBuilder(URI.create(baseUrl + "/" + repo + ".git/git-receive-pack"))
            .timeout(Duration.ofSeconds(120))
            .header("Content-Type", RECEIVE_TYPE)
            .header("Authorization", "Basic " + basic(token))
            .POST(HttpRequest.BodyPublishers.ofByteArray(body))
            .build(),
        HttpResponse.BodyHandlers.ofByteArray());
  }

  private static String basic(String token) {
    return Base64.getEncoder().encodeToString(("agent:" + token).getBytes(StandardCharsets.UTF_8));
  }

  /** The repository's refs, its pack files and any temporary file JGit leaves while receiving. */
  private String refsAndPacks(String repo) throws Exception {
    Path dir = gateway.repoDir(repo);
    StringBuilder state =
        new StringBuilder(new GitCli(Files.createDirectories(tmp.resolve("home"))).refs(dir));
    try (Stream<Path> files = Files.walk(dir.resolve("objects"))) {
      files
          .filter(Files::isRegularFile)
          .map(dir::relativize)
          .sorted()
          .forEach(p -> state.append(p).append('\n'));
    }
    return state.toString();
  }

  /**
   * Whether a thread of this JVM is in JGit's pack parser: the in-process gateway unpacking a push.
   */
  private static boolean jgitIsUnpacking() {
    return !unpackingStacks().isEmpty();
  }

  private static String unpackingStacks() {
    StringBuilder stacks = new StringBuilder();
    Thread.getAllStackTraces()
        .forEach(
            (thread, frames) -> {
              if (Stream.of(frames)
                  .anyMatch(
                      f -> f.getClassName().equals("org.eclipse.jgit.transport.PackParser"))) {
                stacks.append(thread.getName()).append('\n');
                Stream.of(frames)
                    .limit(8)
                    .forEach(f -> stacks.append("  at ").append(f).append('\n'));
              }
            });
    return stacks.toString();
  }

  private static boolean waitFor(Duration limit, java.util.function.BooleanSupplier condition)
      throws InterruptedException {
    long end = System.nanoTime() + limit.toNanos();
    while (System.nanoTime() < end) {
      if (condition.getAsBoolean()) {
        return true;
      }
      Thread.sleep(20);
    }
    return condition.getAsBoolean();
  }

  private static final Pattern LISTENING =
      Pattern.compile("listening on http://127\\.0\\.0\\.1:(\\d+)");
  private final StringBuffer jarLog = new StringBuffer();

  /**
   * Starts the packaged gateway with {@code jvmOption} and its default limits; returns its port.
   */
  private int startJar(Path data, String jvmOption) throws Exception {
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    String jar = System.getProperty("spb.gateway.jar", "target/spb-gateway.jar");
    ProcessBuilder pb = new ProcessBuilder(java, jvmOption, "-jar", jar).redirectErrorStream(true);
    pb.environment().put("SPB_DATA_DIR", data.toString());
    pb.environment().put("SPB_HTTP_PORT", "0");
    Process p = pb.start();
    processes.add(p);
    CompletableFuture<Integer> port = new CompletableFuture<>();
    Thread reader =
        new Thread(
            () -> {
              try (BufferedReader in =
                  new BufferedReader(
                      new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
                for (String line = in.readLine(); line != null; line = in.readLine()) {
                  jarLog.append(line).append('\n');
                  Matcher m = LISTENING.matcher(line);
                  if (m.find()) {
                    port.complete(Integer.parseInt(m.group(1)));
                  }
                }
                port.completeExceptionally(new IOException("gateway exited:\n" + jarLog));
              } catch (IOException e) {
                port.completeExceptionally(e);
              }
            });
    reader.setDaemon(true);
    reader.start();
    return port.get(60, TimeUnit.SECONDS);
  }
}
