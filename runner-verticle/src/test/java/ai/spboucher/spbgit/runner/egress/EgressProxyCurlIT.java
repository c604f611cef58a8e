package ai.spboucher.spbgit.runner.egress;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.spboucher.spbgit.runner.egress.TargetServers.Http;
import ai.spboucher.spbgit.testsupport.Prerequisites;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Real clients through the proxy, as inside the sandbox: {@code curl} and {@code git} talk to a TCP
 * port bridged to the unix socket, the way socat bridges {@code 127.0.0.1:3128} in the container.
 */
@Timeout(60)
class EgressProxyCurlIT {

  @TempDir Path dir;

  private Http allowed;
  private Http other;
  private EgressProxy proxy;
  private ServerSocketChannel bridge;

  static final Vertx VERTX = Vertx.vertx(new VertxOptions().setPreferNativeTransport(true));

  @AfterAll
  static void closeVertx() throws Exception {
    VERTX.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
  }

  @BeforeEach
  void startProxyAndBridge() throws IOException {
    Prerequisites.require(onPath("curl"), "curl (apt-get install curl)");
    allowed = new Http();
    other = new Http();
    proxy =
        EgressProxy.start(
            VERTX,
            dir.resolve("egress.sock"),
            EgressPolicy.of("127.0.0.1:" + allowed.port()),
            new EgressRecorder());
    bridge =
        ServerSocketChannel.open().bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
    daemon(this::bridgeLoop);
  }

  @AfterEach
  void stop() throws IOException {
    if (bridge != null) {
      bridge.close();
      proxy.close();
      allowed.close();
      other.close();
    }
  }

  @Test
  void curlGetsAnAllowedUrlThroughThePlainHttpProxy() throws Exception {
    assertEquals("hello", run("curl", "-sS", "--proxy", proxyUrl(), url(allowed, "/plain")));
    assertEquals("GET /plain HTTP/1.1", allowed.received.poll(5, TimeUnit.SECONDS).requestLine());
  }

  @Test
  void curlGetsAnAllowedUrlThroughAConnectTunnel() throws Exception {
    assertEquals(
        "hello",
        run("curl", "-sS", "--proxytunnel", "--proxy", proxyUrl(), url(allowed, "/tunnel")));
    assertEquals("GET /tunnel HTTP/1.1", allowed.received.poll(5, TimeUnit.SECONDS).requestLine());
  }

  @Test
  void curlIsRefusedElsewhereEitherWay() throws Exception {
    assertEquals(
        "403",
        run(
            "curl",
            "-sS",
            "-o",
            "/dev/null",
            "-w",
            "%{http_code}",
            "--proxy",
            proxyUrl(),
            url(other, "/")));
    Process tunnel =
        new ProcessBuilder("curl", "-sS", "--proxytunnel", "--proxy", proxyUrl(), url(other, "/"))
            .redirectErrorStream(true)
            .start();
    String output = new String(tunnel.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(tunnel.waitFor(30, TimeUnit.SECONDS));
    assertNotEquals(0, tunnel.exitValue());
    assertTrue(output.contains("403"), output);
    assertEquals(0, other.accepted.get());
  }

  @Test
  void gitSendsItsSmartHttpRequestsThroughTheProxy() throws Exception {
    Prerequisites.require(onPath("git"), "git (apt-get install git)");
    Process git =
        new ProcessBuilder(
                "git", "-c", "http.proxy=" + proxyUrl(), "ls-remote", url(allowed, "/repo.git"))
            .redirectErrorStream(true)
            .start();
    git.getInputStream().readAllBytes();
    assertTrue(git.waitFor(30, TimeUnit.SECONDS));
    // The stand-in server is no git server, so git gives up after its first request; what matters
    // is how it arrived.
    assertEquals(
        "GET /repo.git/info/refs?service=git-upload-pack HTTP/1.1",
        allowed.received.poll(5, TimeUnit.SECONDS).requestLine());
  }

  private String proxyUrl() throws IOException {
    return "http://127.0.0.1:" + ((InetSocketAddress) bridge.getLocalAddress()).getPort();
  }

  private static String url(Http server, String path) {
    return "http://127.0.0.1:" + server.port() + path;
  }

  private static String run(String... command) throws IOException, InterruptedException {
    Process process =
        new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.INHERIT).start();
    String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(process.waitFor(30, TimeUnit.SECONDS));
    assertEquals(0, process.exitValue(), () -> String.join(" ", command) + " printed " + output);
    return output;
  }

  private void bridgeLoop() {
    while (bridge.isOpen()) {
      try {
        SocketChannel tcp = bridge.accept();
        SocketChannel unix = SocketChannel.open(UnixDomainSocketAddress.of(proxy.socketPath()));
        daemon(() -> copy(tcp, unix));
        daemon(() -> copy(unix, tcp));
      } catch (IOException e) {
        return;
      }
    }
  }

  /** Copies until end of stream, then closes both: enough for clients that never half-close. */
  private static void copy(SocketChannel from, SocketChannel to) {
    ByteBuffer buf = ByteBuffer.allocate(16 * 1024);
    try (from;
        to) {
      while (from.read(buf) >= 0) {
        buf.flip();
        while (buf.hasRemaining()) {
          to.write(buf);
        }
        buf.clear();
      }
    } catch (IOException e) {
      // one side went away
    }
  }

  private static void daemon(Runnable body) {
    Thread thread = new Thread(body);
    thread.setDaemon(true);
    thread.start();
  }

  private static boolean onPath(String command) {
    try {
      return new ProcessBuilder(command, "--version").redirectErrorStream(true).start().waitFor()
          == 0;
    } catch (IOException | InterruptedException e) {
      return false;
    }
  }
}
