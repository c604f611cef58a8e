package ai.spboucher.spbgit.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.spboucher.spbgit.testsupport.GitCli;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
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
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Slow-loris against the packaged gateway, run with a file-descriptor limit of 1024 as a small host
 * would: many connections from a few addresses that never finish their request head. Connections
 * are capped (400 in all, 100 per address here), heads must arrive within 3 s, and nothing else may
 * suffer: the API and git keep answering from another address, a connection over a cap gets a 503,
 * and a clone and push that are slow but moving finish.
 */
class SlowlorisIT {

  private static final Pattern LISTENING =
      Pattern.compile("listening on http://127\\.0\\.0\\.1:(\\d+)");
  private static final Duration HEAD_TIMEOUT = Duration.ofSeconds(3);

  /** The gateway's sweep runs at most a second late, and a loaded CI machine adds some. */
  private static final Duration CLOSE_MARGIN = Duration.ofSeconds(3);

  private static final int PER_ADDRESS = 100;
  private static final int TOTAL = 400;

  @TempDir static Path tmp;
  static Process gateway;
  static final StringBuffer log = new StringBuffer();
  static int port;
  static String owner;
  static GitCli git;
  static final HttpClient http =
      HttpClient.newBuilder()
          .version(HttpClient.Version.HTTP_1_1)
          .connectTimeout(Duration.ofSeconds(5))
          .build();

  @BeforeAll
  static void startGateway() throws Exception {
    Path data = tmp.resolve("data");
    String jar =
        Path.of(System.getProperty("spb.gateway.jar", "target/spb-gateway.jar"))
            .toAbsolutePath()
            .toString();
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    // Soft and hard limit both, so the JVM cannot raise its own; the attack below needs more than
    // this.
    ProcessBuilder pb =
        new ProcessBuilder("bash", "-c", "ulimit -n 1024 && exec \"$0\" -jar \"$1\"", java, jar)
            .redirectErrorStream(true);
    pb.environment().put("SPB_DATA_DIR", data.toString());
    pb.environment().put("SPB_HTTP_PORT", "0");
    pb.environment().put("SPB_HEAD_TIMEOUT", HEAD_TIMEOUT.toSeconds() + "s");
    pb.environment().put("SPB_MAX_CONNECTIONS", String.valueOf(TOTAL));
    pb.environment().put("SPB_MAX_CONNECTIONS_PER_ADDRESS", String.valueOf(PER_ADDRESS));
    gateway = pb.start();
    port = readPort(gateway);
    owner = Files.readString(data.resolve(DataDir.INITIAL_OWNER_TOKEN)).strip();
    assertEquals(201, api("POST", "/api/v1/repos", "{\"name\":\"demo\"}").statusCode());
    git = new GitCli(Files.createDirectories(tmp.resolve("home")));
    Path work = git.workTree(tmp, "work");
    git.ok(work, "push", "-q", pushUrl(port), "main");
  }

  @AfterAll
  static void stopGateway() throws InterruptedException {
    if (gateway != null) {
      gateway.destroy();
      gateway.waitFor(20, TimeUnit.SECONDS);
    }
  }

  @Test
  void slowHeadsFromAFewAddressesLeaveTheApiAndGitAnsweringAndAreClosedAfterTheHeadTimeout()
      throws Exception {
    List<SlowHeads> attack = new ArrayList<>();
    try {
      // 1,200 connections: more than the gateway's 1,024 descriptors, were they all kept.
      for (String source : List.of("127.0.0.2", "127.0.0.3", "127.0.0.4")) {
        attack.add(SlowHeads.open(source, port, 400, Duration.ofSeconds(2)));
      }
      HttpResponse<String> repos = api("GET", "/api/v1/repos", null);
      assertEquals(200, repos.statusCode(), repos.body());
      assertTrue(repos.body().contains("demo"), repos.body());
      GitCli.Result lsRemote =
          git.run(
              tmp,
              "-c",
              "http.lowSpeedLimit=1",
              "-c",
              "http.lowSpeedTime=10",
              "ls-remote",
              "http://127.0.0.1:" + port + "/demo.git");
      assertEquals(0, lsRemote.exit(), lsRemote.output());
      assertTrue(lsRemote.output().contains("refs/heads/main"), lsRemote.output());
      assertTrue(
          attack.stream().mapToInt(SlowHeads::held).sum() > 0,
          "the API and git answered while slow heads were still open");
      for (SlowHeads heads : attack) {
        assertTrue(
            heads.awaitAllClosed(HEAD_TIMEOUT.plus(CLOSE_MARGIN).plusSeconds(2)),
            heads.held() + " slow heads still open");
        assertTrue(
            heads.longestBeforeClose().compareTo(HEAD_TIMEOUT.plus(CLOSE_MARGIN)) <= 0,
            "closed after " + heads.longestBeforeClose());
        assertEquals(0, heads.failedToConnect());
      }
    } finally {
      for (SlowHeads heads : attack) {
        heads.close();
      }
    }
  }

  @Test
  void aConnectionOverTheCapIsAnswered503() throws Exception {
    awaitSlotsGivenBack();
    try (SlowHeads first = SlowHeads.open("127.0.0.5", port, PER_ADDRESS, Duration.ofSeconds(2))) {
      String overAddressCap = fullRequest("127.0.0.5");
      assertTrue(overAddressCap.startsWith("HTTP/1.1 503 "), overAddressCap);
      assertTrue(
          overAddressCap.contains("{\"error\":\"the gateway has too many open connections"),
          overAddressCap);
      List<SlowHeads> rest = new ArrayList<>();
      try {
        for (String source : List.of("127.0.0.6", "127.0.0.7", "127.0.0.8")) {
          rest.add(SlowHeads.open(source, port, PER_ADDRESS, Duration.ofSeconds(2)));
        }
        String overTotalCap = fullRequest("127.0.0.9");
        assertTrue(overTotalCap.startsWith("HTTP/1.1 503 "), overTotalCap);
        assertEquals(
            PER_ADDRESS,
            first.held(),
            "the admitted slow heads are still within their head timeout");
      } finally {
        for (SlowHeads heads : rest) {
          heads.close();
        }
      }
    }
  }

  @Test
  void aSlowButMovingCloneAndPushFinish() throws Exception {
    awaitSlotsGivenBack();
    Path big = git.workTree(tmp, "big");
    byte[] random = new byte[6 << 20];
    new Random(42).nextBytes(random);
    Files.write(big.resolve("random.bin"), random);
    git.ok(big, "add", ".");
    git.ok(big, "commit", "-q", "-m", "six megabytes that do not compress");
    // 1 MiB/s each way: both transfers take several head timeouts.
    try (ThrottledProxy proxy = new ThrottledProxy(port, 1 << 20)) {
      git.ok(big, "push", "-q", pushUrl(proxy.port()), "main:refs/heads/big");
      long begun = System.nanoTime();
      Path clone = tmp.resolve("slow-clone");
      git.ok(
          tmp,
          "clone",
          "-q",
          "-b",
          "big",
          "http://127.0.0.1:" + proxy.port() + "/demo.git",
          clone.toString());
      assertTrue(
          Duration.ofNanos(System.nanoTime() - begun).compareTo(HEAD_TIMEOUT) > 0,
          "the clone was slow");
      assertEquals(random.length, Files.size(clone.resolve("random.bin")));
    }
  }

  /** The connections of the test before are closed, and the gateway has seen it. */
  private static void awaitSlotsGivenBack() throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (System.nanoTime() < deadline && fullRequest("127.0.0.1").startsWith("HTTP/1.1 503 ")) {
      Thread.sleep(200);
    }
  }

  /**
   * A whole {@code GET /api/v1/repos} from {@code source}, and the raw answer up to the server's
   * close.
   */
  private static String fullRequest(String source) throws IOException {
    try (Socket socket = new Socket()) {
      socket.bind(new InetSocketAddress(source, 0));
      socket.connect(new InetSocketAddress("127.0.0.1", port), 5_000);
      socket.setSoTimeout(10_000);
      socket
          .getOutputStream()
          .write(
              ("GET /api/v1/repos HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
                  .getBytes(StandardCharsets.US_ASCII));
      return new String(socket.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    }
  }

  private static HttpResponse<String> api(String method, String path, String body)
      throws Exception {
    return http.send(
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
            .timeout(Duration.ofSeconds(5))
            .header("Authorization", "Bearer " + owner)
            .method(
                method,
                body == null
                    ? HttpRequest.BodyPublishers.noBody()
                    : HttpRequest.BodyPublishers.ofString(body))
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }

  private static String pushUrl(int toPort) {
    return "http://owner:" + owner + "@127.0.0.1:" + toPort + "/demo.git";
  }

  private static int readPort(Process p) throws Exception {
    CompletableFuture<Integer> found = new CompletableFuture<>();
    Thread reader =
        new Thread(
            () -> {
              try (BufferedReader in =
                  new BufferedReader(
                      new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
                for (String line = in.readLine(); line != null; line = in.readLine()) {
                  log.append(line).append('\n');
                  Matcher m = LISTENING.matcher(line);
                  if (m.find()) {
                    found.complete(Integer.parseInt(m.group(1)));
                  }
                }
                found.completeExceptionally(new IOException("gateway exited:\n" + log));
              } catch (IOException e) {
                found.completeExceptionally(e);
              }
            },
            "gateway-log");
    reader.setDaemon(true);
    reader.start();
    return found.get(60, TimeUnit.SECONDS);
  }

  /**
   * A TCP proxy on 127.0.0.1 that forwards each connection to the gateway at {@code bytesPerSecond}
   * each way: a client on a slow link that keeps moving.
   */
  private static final class ThrottledProxy implements AutoCloseable {
    private final ServerSocket server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    private final Thread acceptor;

    ThrottledProxy(int target, int bytesPerSecond) throws IOException {
      acceptor =
          new Thread(
              () -> {
                while (!server.isClosed()) {
                  try {
                    Socket client = server.accept();
                    Socket upstream = new Socket("127.0.0.1", target);
                    pump(client, upstream, bytesPerSecond);
                    pump(upstream, client, bytesPerSecond);
                  } catch (IOException e) {
                    return;
                  }
                }
              },
              "throttled-proxy");
      acceptor.setDaemon(true);
      acceptor.start();
    }

    int port() {
      return server.getLocalPort();
    }

    private static void pump(Socket from, Socket to, int bytesPerSecond) {
      Thread pump =
          new Thread(
              () -> {
                byte[] chunk = new byte[bytesPerSecond / 10];
                try (InputStream in = from.getInputStream();
                    OutputStream out = to.getOutputStream()) {
                  for (int n = in.read(chunk); n >= 0; n = in.read(chunk)) {
                    out.write(chunk, 0, n);
                    out.flush();
                    Thread.sleep(100);
                  }
                } catch (IOException | InterruptedException e) {
                  // The other side went away; closing both ends below tells the peer.
                } finally {
                  closeQuietly(from);
                  closeQuietly(to);
                }
              },
              "throttled-pump");
      pump.setDaemon(true);
      pump.start();
    }

    private static void closeQuietly(Socket socket) {
      try {
        socket.close();
      } catch (IOException e) {
        // Already closed by the other pump.
      }
    }

    @Override
    public void close() throws IOException {
      server.close();
    }
  }
}
