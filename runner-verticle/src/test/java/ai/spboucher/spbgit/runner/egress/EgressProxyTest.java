package ai.spboucher.spbgit.runner.egress;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.spboucher.spbgit.runner.egress.ProxyClient.Response;
import ai.spboucher.spbgit.runner.egress.TargetServers.Echo;
import ai.spboucher.spbgit.runner.egress.TargetServers.Http;
import ai.spboucher.spbgit.runner.egress.TargetServers.Received;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import java.io.IOException;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

@Timeout(30)
class EgressProxyTest {

  @TempDir Path dir;

  private final List<AutoCloseable> closeables = new ArrayList<>();
  private final BlockingQueue<EgressRecord> records = new LinkedBlockingQueue<>();
  private final EgressRecorder recorder = new EgressRecorder(records::add);

  static final Vertx VERTX = Vertx.vertx(new VertxOptions().setPreferNativeTransport(true));

  @AfterAll
  static void closeVertx() throws Exception {
    VERTX.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
  }

  @AfterEach
  void closeAll() throws Exception {
    for (int i = closeables.size() - 1; i >= 0; i--) {
      closeables.get(i).close();
    }
  }

  @Test
  void connectTunnelsBothWaysToAnAllowedTarget() throws Exception {
    Echo echo = closeLater(new Echo());
    EgressProxy proxy = proxy("127.0.0.1:" + echo.port());
    try (ProxyClient client = ProxyClient.connect(proxy.socketPath())) {
      Response response = client.send(connect("127.0.0.1:" + echo.port())).readResponse();
      // Vert.x's reason phrase for the 200 of a CONNECT; what matters is the status and that no
      // header comes.
      assertEquals("HTTP/1.1 200 OK\r\n\r\n", response.head());
      client.send("ping\n");
      assertEquals("ping\n", ascii(client.readExactly(5)));
    }
    assertEquals(1, echo.accepted.get());
  }

  @Test
  void connectToAnUnlistedPortIsForbiddenAndNeverReachesIt() throws Exception {
    Echo allowed = closeLater(new Echo());
    Echo other = closeLater(new Echo());
    EgressProxy proxy = proxy("127.0.0.1:" + allowed.port());
    Response response = request(proxy, connect("127.0.0.1:" + other.port()));
    assertEquals(403, response.status());
    assertEquals(
        "egress to 127.0.0.1:" + other.port() + " is not allowed for this job\n", response.body());
    Thread.sleep(200);
    assertEquals(0, other.accepted.get());
  }

  @Test
  void absoluteFormGetReachesAnAllowedServerInOriginForm() throws Exception {
    Http http = closeLater(new Http());
    EgressProxy proxy = proxy("127.0.0.1:" + http.port());
    String authority = "127.0.0.1:" + http.port();
    Response response =
        request(
            proxy,
            "GET http://"
                + authority
                + "/repo.git/info/refs?service=git-upload-pack HTTP/1.1\r\n"
                + "Host: "
                + authority
                + "\r\nUser-Agent: git/2.39.5\r\nProxy-Connection: Keep-Alive\r\n"
                + "Proxy-Authorization: Basic c2VjcmV0\r\nConnection: keep-alive\r\nKeep-Alive: 300\r\nAccept: */*\r\n\r\n");
    assertEquals(200, response.status());
    assertEquals("hello", response.body());
    Received received = http.received.poll(5, TimeUnit.SECONDS);
    assertNotNull(received);
    assertEquals(
        "GET /repo.git/info/refs?service=git-upload-pack HTTP/1.1\r\nHost: "
            + authority
            + "\r\nUser-Agent: git/2.39.5\r\nAccept: */*\r\nconnection: close\r\n\r\n",
        received.head(),
        "Vert.x's client writes its connection header in lower case");
  }

  @Test
  void hopByHopHeadersAndThoseTheConnectionHeaderNamesStayWithTheProxy() throws Exception {
    Http http = closeLater(new Http());
    EgressProxy proxy = proxy("127.0.0.1:" + http.port());
    String authority = "127.0.0.1:" + http.port();
    Response response =
        request(
            proxy,
            "GET http://"
                + authority
                + "/simple/probe/ HTTP/1.1\r\nHost: "
                + authority
                + "\r\nConnection: keep-alive, X-Hop\r\nX-Hop: 1\r\nTE: trailers\r\nUpgrade: h2c\r\nTrailer: X-T\r\n"
                + "Proxy-Connection: keep-alive\r\nAccept: text/html\r\n\r\n");
    assertEquals(200, response.status());
    Received received = http.received.poll(5, TimeUnit.SECONDS);
    assertNotNull(received);
    assertEquals(
        "GET /simple/probe/ HTTP/1.1\r\nHost: "
            + authority
            + "\r\nAccept: text/html\r\nconnection: close"
            + "\r\n\r\n",
        received.head());
  }

  @Test
  void absoluteFormWithoutPathOrPortIsRewrittenToSlash() throws Exception {
    Http http = closeLater(new Http());
    EgressProxy proxy = proxy("127.0.0.1:" + http.port());
    assertEquals(
        200,
        request(proxy, "GET http://127.0.0.1:" + http.port() + "?q=1 HTTP/1.0\r\n\r\n").status());
    assertEquals("GET /?q=1 HTTP/1.0", http.received.poll(5, TimeUnit.SECONDS).requestLine());
    EgressProxy defaultPort =
        closeLater(
            EgressProxy.builder(VERTX, dir.resolve("p80.sock"), EgressPolicy.of("127.0.0.1:80"))
                .recorder(recorder)
                .start());
    // Port 80 is implied by http:// and must be listed as such; here it is listed, so the request
    // goes
    // out: 502 when nothing listens there, and whatever answers otherwise, but never the policy's
    // 403.
    boolean closed = portIsClosed(80);
    int status = request(defaultPort, "GET http://127.0.0.1/ HTTP/1.1\r\n\r\n").status();
    if (closed) {
      assertEquals(502, status);
    } else {
      assertNotEquals(403, status, "port 80 is listed, so a request to it is not refused");
    }
    EgressProxy otherPort =
        closeLater(
            EgressProxy.builder(VERTX, dir.resolve("p81.sock"), EgressPolicy.of("127.0.0.1:81"))
                .recorder(recorder)
                .start());
    assertEquals(403, request(otherPort, "GET http://127.0.0.1/ HTTP/1.1\r\n\r\n").status());
  }

  @Test
  void absoluteFormPostForwardsTheBody() throws Exception {
    Http http = closeLater(new Http());
    EgressProxy proxy = proxy("127.0.0.1:" + http.port());
    String body = "0032want 0123456789abcdef0123456789abcdef01234567\n00000009done\n";
    try (ProxyClient client = ProxyClient.connect(proxy.socketPath())) {
      client.send(
          "POST http://127.0.0.1:"
              + http.port()
              + "/repo.git/git-upload-pack HTTP/1.1\r\n"
              + "Content-Type: application/x-git-upload-pack-request\r\nContent-Length: "
              + body.length()
              + "\r\n\r\n"
              + body.substring(0, 10));
      Thread.sleep(100);
      client.send(body.substring(10));
      assertEquals(200, client.readResponse().status());
    }
    Received received = http.received.poll(5, TimeUnit.SECONDS);
    assertEquals("POST /repo.git/git-upload-pack HTTP/1.1", received.requestLine());
    assertEquals(body, received.body());
  }

  @Test
  void theJobHalfClosingStillGetsTheResponse() throws Exception {
    Http http = closeLater(new Http());
    EgressProxy proxy = proxy("127.0.0.1:" + http.port());
    try (ProxyClient client = ProxyClient.connect(proxy.socketPath())) {
      client.send("GET http://127.0.0.1:" + http.port() + "/ HTTP/1.1\r\n\r\n").shutdownOutput();
      assertEquals("hello", client.readResponse().body());
    }
  }

  @Test
  void absoluteFormToAnUnlistedTargetIsForbidden() throws Exception {
    Http allowed = closeLater(new Http());
    Http other = closeLater(new Http());
    EgressProxy proxy = proxy("127.0.0.1:" + allowed.port());
    Response response =
        request(proxy, "GET http://127.0.0.1:" + other.port() + "/ HTTP/1.1\r\n\r\n");
    assertEquals(403, response.status());
    assertEquals(
        "egress to 127.0.0.1:" + other.port() + " is not allowed for this job\n", response.body());
    Thread.sleep(200);
    assertEquals(0, other.accepted.get());
  }

  @Test
  void sameHostOnAnotherPortIsRefused() throws Exception {
    Echo allowed = closeLater(new Echo());
    Echo other = closeLater(new Echo());
    EgressProxy proxy = proxy("127.0.0.1:" + allowed.port(), "localhost:" + other.port());
    assertEquals(403, request(proxy, connect("127.0.0.1:" + other.port())).status());
    assertEquals(
        403,
        request(proxy, "GET http://127.0.0.1:" + other.port() + "/ HTTP/1.1\r\n\r\n").status());
    assertEquals(0, other.accepted.get());
  }

  /**
   * Matching is on the spelling the job used, never on what it resolves to: listing the loopback
   * address does not admit {@code localhost}, even though they reach the same port.
   */
  @Test
  void localhostIsNotTheSameEntryAsTheLoopbackAddress() throws Exception {
    Echo echo = closeLater(new Echo());
    EgressProxy proxy = proxy("127.0.0.1:" + echo.port());
    Response response = request(proxy, connect("localhost:" + echo.port()));
    assertEquals(403, response.status());
    assertEquals(
        "egress to localhost:" + echo.port() + " is not allowed for this job\n", response.body());
    // Other spellings of the address are not even valid targets.
    assertEquals(400, request(proxy, connect("127.1:" + echo.port())).status());
    assertEquals(400, request(proxy, connect("[::ffff:127.0.0.1]:" + echo.port())).status());
    assertEquals(0, echo.accepted.get());
  }

  @Test
  void listedNameResolvingOnlyToLoopbackIsRefusedUnlessAllowedExplicitly() throws Exception {
    Echo echo = closeLater(new Echo());
    EgressProxy strict = proxy("localhost:" + echo.port());
    Response refused = request(strict, connect("localhost:" + echo.port()));
    assertEquals(403, refused.status());
    assertTrue(refused.body().contains("resolves only to local addresses"), refused.body());
    assertEquals(0, echo.accepted.get());
    EgressRecord record = nextRecord();
    assertFalse(record.allowed());
    assertEquals("resolves only to local addresses", record.failure());

    EgressProxy lenient =
        closeLater(
            EgressProxy.builder(
                    VERTX, dir.resolve("lenient.sock"), EgressPolicy.of("localhost:" + echo.port()))
                .refuseLocalResolutions(false)
                .start());
    try (ProxyClient client = ProxyClient.connect(lenient.socketPath())) {
      assertEquals(200, client.send(connect("LOCALHOST:" + echo.port())).readResponse().status());
      client.send("x");
      assertEquals("x", ascii(client.readExactly(1)));
    }
  }

  @Test
  void ipv6LiteralTargetIsMatchedByAddress() throws Exception {
    InetAddress v6 = InetAddress.getByName("::1");
    Echo echo;
    try {
      echo = closeLater(new Echo(v6));
    } catch (IOException e) {
      Assumptions.abort("no IPv6 loopback here: " + e);
      return;
    }
    Assumptions.assumeTrue(v6 instanceof Inet6Address);
    EgressProxy proxy = proxy("[::1]:" + echo.port());
    try (ProxyClient client = ProxyClient.connect(proxy.socketPath())) {
      assertEquals(200, client.send(connect("[0:0::1]:" + echo.port())).readResponse().status());
      client.send("v6");
      assertEquals("v6", ascii(client.readExactly(2)));
    }
    assertEquals("0:0:0:0:0:0:0:1", nextRecord().host());
  }

  @Test
  void originFormAndOtherSchemesAreBadRequests() throws Exception {
    Http http = closeLater(new Http());
    EgressProxy proxy = proxy("127.0.0.1:" + http.port());
    String host = "Host: 127.0.0.1:" + http.port() + "\r\n";
    assertEquals(
        400, request(proxy, "GET /repo.git/info/refs HTTP/1.1\r\n" + host + "\r\n").status());
    assertEquals(400, request(proxy, "OPTIONS * HTTP/1.1\r\n" + host + "\r\n").status());
    assertEquals(
        400,
        request(proxy, "GET https://127.0.0.1:" + http.port() + "/ HTTP/1.1\r\n\r\n").status());
    assertEquals(
        400, request(proxy, "GET ftp://127.0.0.1:" + http.port() + "/ HTTP/1.1\r\n\r\n").status());
    assertEquals(
        400,
        request(proxy, "GET http://u:p@127.0.0.1:" + http.port() + "/ HTTP/1.1\r\n\r\n").status());
    assertEquals(0, http.accepted.get());
    assertTrue(records.isEmpty());
  }

  @Test
  void malformedHeadsAreBadRequestsAndTheProxyKeepsServing() throws Exception {
    Echo echo = closeLater(new Echo());
    EgressProxy proxy = proxy("127.0.0.1:" + echo.port());
    String target = "127.0.0.1:" + echo.port();
    List<String> garbage =
        List.of(
            "\u0000\u0001\u0002\u00ff\r\n\r\n",
            "\r\n\r\n",
            "hello\r\n\r\n",
            "CONNECT " + target + "\r\n\r\n",
            "CONNECT  " + target + " HTTP/1.1\r\n\r\n",
            "CONNECT " + target + " HTTP/2.0\r\n\r\n",
            "CONNECT " + target + " http/1.1\r\n\r\n",
            "CONNECT 127.0.0.1 HTTP/1.1\r\n\r\n",
            "CONNECT 127.0.0.1:0 HTTP/1.1\r\n\r\n",
            "CONNECT 127.0.0.1:99999 HTTP/1.1\r\n\r\n",
            "CONNECT :" + echo.port() + " HTTP/1.1\r\n\r\n",
            "CONNECT http://" + target + " HTTP/1.1\r\n\r\n",
            "CONNECT " + target + " HTTP/1.1\r\nno colon here\r\n\r\n",
            "CONNECT " + target + " HTTP/1.1\r\nHost: a\r\n folded: value\r\n\r\n",
            "CONNECT " + target + " HTTP/1.1\r\nBad Name: x\r\n\r\n",
            "CONNECT " + target + " HTTP/1.1\r\nX: a\u0000b\r\n\r\n",
            "CONNECT " + target + " HTTP/1.1\nHost: a\r\n\r\n",
            "G\u00e9T http://" + target + "/ HTTP/1.1\r\n\r\n",
            "GET http://" + target + "/\u00e9 HTTP/1.1\r\n\r\n",
            "GET http://" + target + "/#frag HTTP/1.1\r\n\r\n",
            "GET http:///path HTTP/1.1\r\n\r\n");
    for (String head : garbage) {
      assertEquals(
          400, request(proxy, head).status(), () -> "for " + head.replace("\r\n", "\\r\\n"));
    }
    assertEquals(0, echo.accepted.get());
    assertTunnelWorks(proxy, echo);
  }

  @Test
  void clientLeavingWithoutARequestLeavesNoRecord() throws Exception {
    Echo echo = closeLater(new Echo());
    EgressProxy proxy = proxy("127.0.0.1:" + echo.port());
    ProxyClient.connect(proxy.socketPath()).close();
    try (ProxyClient client = ProxyClient.connect(proxy.socketPath())) {
      client.send("CONNECT 127.0.0.1:" + echo.port());
    }
    assertTunnelWorks(proxy, echo);
    assertEquals("CONNECT", nextRecord().method());
    assertEquals(1, recorder.records().size());
  }

  @Test
  void oversizedHeadIsRejectedWith431() throws Exception {
    Http http = closeLater(new Http());
    EgressProxy proxy =
        start(
            EgressProxy.builder(
                    VERTX, dir.resolve("egress.sock"), EgressPolicy.of("127.0.0.1:" + http.port()))
                .maxHeadBytes(1024));
    String head =
        "GET http://127.0.0.1:"
            + http.port()
            + "/ HTTP/1.1\r\nX-Pad: "
            + "a".repeat(2000)
            + "\r\n\r\n";
    assertEquals(431, request(proxy, head).status());
    String endless =
        "GET http://127.0.0.1:" + http.port() + "/ HTTP/1.1\r\n" + "X-Pad: a\r\n".repeat(200);
    assertEquals(431, request(proxy, endless).status());
    assertEquals(0, http.accepted.get());
    assertEquals(
        200, request(proxy, "GET http://127.0.0.1:" + http.port() + "/ HTTP/1.1\r\n\r\n").status());
  }

  @Test
  void unfinishedHeadTimesOutWith408() throws Exception {
    Echo echo = closeLater(new Echo());
    EgressProxy proxy =
        start(
            EgressProxy.builder(
                    VERTX, dir.resolve("egress.sock"), EgressPolicy.of("127.0.0.1:" + echo.port()))
                .headTimeout(Duration.ofMillis(300)));
    long start = System.nanoTime();
    try (ProxyClient slow = ProxyClient.connect(proxy.socketPath())) {
      slow.send("CONNECT 127.0.0.1:" + echo.port() + " HTTP/1.1\r\n");
      Thread.sleep(100);
      slow.send("Host: 127.0.0.1\r\n");
      Response response = slow.readResponse();
      assertEquals(408, response.status());
      assertTrue(slow.readsEndOfStream());
    }
    assertTrue(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(5));
    try (ProxyClient silent = ProxyClient.connect(proxy.socketPath())) {
      assertEquals(408, silent.readResponse().status());
    }
    assertEquals(0, echo.accepted.get());
    // A tunnel outlives the head timeout.
    try (ProxyClient client = ProxyClient.connect(proxy.socketPath())) {
      assertEquals(200, client.send(connect("127.0.0.1:" + echo.port())).readResponse().status());
      Thread.sleep(600);
      client.send("late");
      assertEquals("late", ascii(client.readExactly(4)));
    }
  }

  @Test
  void connectionsBeyondTheLimitGet503() throws Exception {
    Echo echo = closeLater(new Echo());
    EgressProxy proxy =
        start(
            EgressProxy.builder(
                    VERTX, dir.resolve("egress.sock"), EgressPolicy.of("127.0.0.1:" + echo.port()))
                .maxConnections(2));
    ProxyClient first = closeLater(ProxyClient.connect(proxy.socketPath()));
    ProxyClient second = closeLater(ProxyClient.connect(proxy.socketPath()));
    assertEquals(200, first.send(connect("127.0.0.1:" + echo.port())).readResponse().status());
    assertEquals(200, second.send(connect("127.0.0.1:" + echo.port())).readResponse().status());
    for (int i = 0; i < 3; i++) {
      try (ProxyClient third = ProxyClient.connect(proxy.socketPath())) {
        assertEquals(503, third.readResponse().status());
      }
    }
    first.close();
    while (proxy.openConnections() > 1) {
      Thread.sleep(10);
    }
    assertTunnelWorks(proxy, echo);
    second.send("still here");
    assertEquals("still here", ascii(second.readExactly(10)));
  }

  @Test
  void pipelinedRequestCanOnlyEverReachTheFirstTarget() throws Exception {
    Http allowed = closeLater(new Http());
    Http other = closeLater(new Http());
    EgressProxy proxy = proxy("127.0.0.1:" + allowed.port());
    try (ProxyClient client = ProxyClient.connect(proxy.socketPath())) {
      client.send(
          "GET http://127.0.0.1:"
              + allowed.port()
              + "/first HTTP/1.1\r\n\r\n"
              + "GET http://127.0.0.1:"
              + other.port()
              + "/second HTTP/1.1\r\n\r\n");
      assertEquals("hello", client.readResponse().body());
    }
    assertEquals("GET /first HTTP/1.1", allowed.received.poll(5, TimeUnit.SECONDS).requestLine());
    Thread.sleep(200);
    assertEquals(0, other.accepted.get());
  }

  @Test
  void unreachableAllowedTargetIsBadGateway() throws Exception {
    int port = TargetServers.unusedPort();
    EgressProxy proxy = proxy("127.0.0.1:" + port);
    Response response = request(proxy, connect("127.0.0.1:" + port));
    assertEquals(502, response.status());
    EgressRecord record = nextRecord();
    assertTrue(record.allowed());
    assertTrue(record.failure().startsWith("cannot connect"), record.failure());
  }

  @Test
  void recorderShowsAllowedAndRefusedAttemptsWithByteCounts() throws Exception {
    Echo echo = closeLater(new Echo());
    Http http = closeLater(new Http());
    int refusedPort = TargetServers.unusedPort();
    EgressProxy proxy = proxy("127.0.0.1:" + echo.port(), "127.0.0.1:" + http.port());
    try (ProxyClient client = ProxyClient.connect(proxy.socketPath())) {
      // Bytes sent right behind the CONNECT head (a TLS ClientHello, say) are forwarded too.
      client.send(connect("127.0.0.1:" + echo.port()) + "hello");
      assertEquals(200, client.readResponse().status());
      assertEquals("hello", ascii(client.readExactly(5)));
      client.send("world!");
      assertEquals("world!", ascii(client.readExactly(6)));
    }
    EgressRecord tunnel = nextRecord();
    assertEquals(
        new EgressRecord(
            tunnel.startedAt(),
            "CONNECT",
            "127.0.0.1",
            echo.port(),
            true,
            11,
            11,
            tunnel.duration(),
            null),
        tunnel);
    assertFalse(tunnel.duration().isNegative());

    assertEquals(403, request(proxy, connect("127.0.0.1:" + refusedPort)).status());
    EgressRecord refused = nextRecord();
    assertEquals(
        new EgressRecord(
            refused.startedAt(),
            "CONNECT",
            "127.0.0.1",
            refusedPort,
            false,
            0,
            0,
            refused.duration(),
            "not on the allow-list"),
        refused);
    assertEquals("127.0.0.1:" + refusedPort, refused.target());

    assertEquals(
        200,
        request(
                proxy,
                "POST http://127.0.0.1:"
                    + http.port()
                    + "/x HTTP/1.1\r\n"
                    + "Content-Length: 3\r\n\r\nabc")
            .status());
    EgressRecord post = nextRecord();
    String upstreamHead =
        "POST /x HTTP/1.1\r\nHost: 127.0.0.1:"
            + http.port()
            + "\r\nContent-Length: 3\r\nConnection: close\r\n\r\n";
    assertEquals("POST", post.method());
    assertTrue(post.allowed());
    assertEquals(upstreamHead.length() + 3, post.bytesUp());
    assertEquals(Http.RESPONSE.length(), post.bytesDown());

    assertEquals(List.of(tunnel, refused, post), recorder.records());
  }

  @Test
  void largeTransfersSurviveBothWays() throws Exception {
    Echo echo = closeLater(new Echo());
    EgressProxy proxy = proxy("127.0.0.1:" + echo.port());
    byte[] payload = new byte[4 * 1024 * 1024];
    new Random(42).nextBytes(payload);
    try (ProxyClient client = ProxyClient.connect(proxy.socketPath())) {
      assertEquals(200, client.send(connect("127.0.0.1:" + echo.port())).readResponse().status());
      CompletableFuture<Void> writer =
          CompletableFuture.runAsync(
              () -> {
                try {
                  client.send(payload);
                } catch (IOException e) {
                  throw new IllegalStateException(e);
                }
              });
      assertArrayEquals(payload, client.readExactly(payload.length));
      writer.get(10, TimeUnit.SECONDS);
    }
    EgressRecord record = nextRecord();
    assertEquals(payload.length, record.bytesUp());
    assertEquals(payload.length, record.bytesDown());
  }

  @Test
  void closeRemovesTheSocketAndEndsOpenTunnels() throws Exception {
    Echo echo = closeLater(new Echo());
    EgressProxy proxy = proxy("127.0.0.1:" + echo.port());
    ProxyClient client = closeLater(ProxyClient.connect(proxy.socketPath()));
    assertEquals(200, client.send(connect("127.0.0.1:" + echo.port())).readResponse().status());
    ProxyClient idle = closeLater(ProxyClient.connect(proxy.socketPath()));
    client.send("ping");
    assertEquals("ping", ascii(client.readExactly(4)));

    proxy.close();
    assertFalse(Files.exists(proxy.socketPath()));
    assertTrue(client.readsEndOfStream());
    assertTrue(idle.readsEndOfStream());
    assertTrue(echo.peerClosed.await(5, TimeUnit.SECONDS));
    assertEquals(0, proxy.openConnections());
    assertThrows(
        IOException.class,
        () -> SocketChannel.open(UnixDomainSocketAddress.of(proxy.socketPath())));
    EgressRecord record = nextRecord();
    assertEquals(4, record.bytesUp());
    assertNull(record.failure());
    proxy.close();
  }

  @Test
  void socketFileIsReadableAndWritableByEveryone() throws Exception {
    EgressProxy proxy = proxy();
    assertEquals(
        PosixFilePermissions.fromString("rw-rw-rw-"),
        Files.getPosixFilePermissions(proxy.socketPath()));
  }

  @Test
  void startRefusesAnExistingSocketPathAndLeavesItAlone() throws Exception {
    Path taken = dir.resolve("egress.sock");
    Files.writeString(taken, "not mine");
    assertThrows(
        IOException.class, () -> EgressProxy.start(VERTX, taken, EgressPolicy.denyAll(), recorder));
    assertEquals("not mine", Files.readString(taken));
  }

  @Test
  void denyAllRefusesEverything() throws Exception {
    Echo echo = closeLater(new Echo());
    EgressProxy proxy = proxy();
    assertEquals(403, request(proxy, connect("127.0.0.1:" + echo.port())).status());
    assertEquals(0, echo.accepted.get());
  }

  private EgressProxy proxy(String... entries) throws IOException {
    return start(EgressProxy.builder(VERTX, dir.resolve("egress.sock"), EgressPolicy.of(entries)));
  }

  private EgressProxy start(EgressProxy.Builder builder) throws IOException {
    return closeLater(builder.recorder(recorder).start());
  }

  private <T extends AutoCloseable> T closeLater(T closeable) {
    closeables.add(closeable);
    return closeable;
  }

  private static Response request(EgressProxy proxy, String head) throws IOException {
    try (ProxyClient client = ProxyClient.connect(proxy.socketPath())) {
      Response response = client.send(head).readResponse();
      assertTrue(client.readsEndOfStream());
      return response;
    }
  }

  private static void assertTunnelWorks(EgressProxy proxy, Echo echo) throws IOException {
    try (ProxyClient client = ProxyClient.connect(proxy.socketPath())) {
      assertEquals(200, client.send(connect("127.0.0.1:" + echo.port())).readResponse().status());
      client.send("ok?");
      assertEquals("ok?", ascii(client.readExactly(3)));
    }
  }

  private EgressRecord nextRecord() throws InterruptedException {
    EgressRecord record = records.poll(5, TimeUnit.SECONDS);
    assertNotNull(record, "no egress record within 5 s");
    return record;
  }

  private static String connect(String authority) {
    return "CONNECT " + authority + " HTTP/1.1\r\nHost: " + authority + "\r\n\r\n";
  }

  private static String ascii(byte[] bytes) {
    return new String(bytes, StandardCharsets.ISO_8859_1);
  }

  private static boolean portIsClosed(int port) {
    try (java.net.Socket socket = new java.net.Socket()) {
      socket.connect(new java.net.InetSocketAddress(InetAddress.getLoopbackAddress(), port), 500);
      return false;
    } catch (IOException e) {
      return true;
    }
  }
}
