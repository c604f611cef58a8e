package ai.spboucher.spbgit.runner.git;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.spboucher.spbgit.runner.egress.EgressRecord;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.net.PemTrustOptions;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.util.Base64;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLServerSocket;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The git relay against a small origin server on 127.0.0.1 (plain and TLS) standing in for the
 * gateway: what it forwards carries the job token and nothing of the job's own credentials; what it
 * refuses never reaches the origin; every attempt is recorded.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class GitRelayTest {

  static final String TOKEN = "eyJhbGciOiJFUzI1NiJ9.eyJqb2IiOiJqMSJ9.c2lnbmF0dXJl";

  @TempDir Path tmp;
  Origin origin;
  GitRelay relay;
  final List<EgressRecord> records = new CopyOnWriteArrayList<>();

  static final Vertx VERTX = Vertx.vertx(new VertxOptions().setPreferNativeTransport(true));

  @AfterAll
  static void closeVertx() throws Exception {
    VERTX.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
  }

  @AfterEach
  void stop() throws IOException {
    if (relay != null) {
      relay.close();
    }
    if (origin != null) {
      origin.close();
    }
  }

  @Test
  void forwardsTheRepositorysRequestsWithTheTokenAndNoneOfTheJobsCredentials() throws Exception {
    startPlain();
    String answer =
        exchange(
            "GET /owner/repo.git/info/refs?service=git-upload-pack HTTP/1.1\r\n"
                + "Host: 127.0.0.1:3130\r\nAuthorization: Basic am9iOmd1ZXNz\r\nCookie: session=stolen\r\n"
                + "Proxy-Authorization: Basic eDp5\r\nGit-Protocol: version=2\r\nUser-Agent: git/2.39\r\n\r\n");

    assertTrue(answer.startsWith("HTTP/1.1 200 "), answer);
    assertTrue(answer.endsWith("origin body"), answer);
    String head = origin.awaitRequest();
    assertTrue(
        head.startsWith("GET /owner/repo.git/info/refs?service=git-upload-pack HTTP/1.1\r\n"),
        head);
    assertEquals(
        List.of(
            "Basic "
                + Base64.getEncoder()
                    .encodeToString(("agent:" + TOKEN).getBytes(StandardCharsets.UTF_8))),
        header(head, "authorization"));
    assertEquals(List.of("127.0.0.1:" + origin.port()), header(head, "host"));
    assertEquals(List.of("close"), header(head, "connection"));
    assertEquals(List.of("version=2"), header(head, "git-protocol"));
    assertTrue(
        header(head, "cookie").isEmpty() && header(head, "proxy-authorization").isEmpty(), head);

    EgressRecord record = awaitRecord();
    assertTrue(record.allowed());
    assertEquals("GET", record.method());
    assertEquals("127.0.0.1:" + origin.port(), record.target());
    assertTrue(record.bytesUp() > 0 && record.bytesDown() > 0, record.toString());
    assertNull(record.failure());
  }

  @Test
  void relaysARequestBodyAsSent() throws Exception {
    startPlain();
    String body = "0032want 0123456789012345678901234567890123456789\n00000009done\n";
    String answer =
        exchange(
            "POST /owner/repo.git/git-upload-pack HTTP/1.1\r\nHost: x\r\n"
                + "Content-Type: application/x-git-upload-pack-request\r\nContent-Length: "
                + body.length()
                + "\r\n\r\n"
                + body);

    assertTrue(answer.startsWith("HTTP/1.1 200 "), answer);
    String received = origin.awaitRequest();
    assertTrue(received.endsWith("\r\n\r\n" + body), received);
    assertEquals(
        List.of("application/x-git-upload-pack-request"), header(received, "content-type"));
  }

  @Test
  void refusesEverythingButTheRepositorysSmartHttp() throws Exception {
    startPlain();
    List<String> refused =
        List.of(
            "GET /api/v1/repos HTTP/1.1",
            "POST /api/v1/repos/repo/jobs/j1/approve HTTP/1.1",
            "GET /owner/other.git/info/refs?service=git-upload-pack HTTP/1.1",
            "POST /owner/other.git/git-receive-pack HTTP/1.1",
            "GET /owner/repo.git/HEAD HTTP/1.1",
            "GET /owner/repo.git/info/refs HTTP/1.1",
            "GET /owner/repo.git/info/refs?service=git-receive-pack&x=1 HTTP/1.1",
            "POST /owner/repo.git/../other.git/git-receive-pack HTTP/1.1",
            "POST /owner/repo.git/%2e%2e/other.git/git-receive-pack HTTP/1.1",
            "GET /owner/repo.git/git-upload-pack HTTP/1.1",
            "CONNECT 127.0.0.1:22 HTTP/1.1",
            "GET http://127.0.0.1:22/owner/repo.git/info/refs?service=git-upload-pack HTTP/1.1");
    for (String line : refused) {
      String answer = exchange(line + "\r\nHost: x\r\n\r\n");
      String status = answer.substring(0, Math.min(12, answer.length()));
      assertTrue(
          status.equals("HTTP/1.1 403") || status.equals("HTTP/1.1 400"), line + " -> " + answer);
    }
    assertEquals(0, origin.requests.size(), "nothing reached the origin: " + origin.requests);
    awaitRecords(refused.size() - 2);
    assertTrue(records.stream().noneMatch(EgressRecord::allowed), records.toString());
  }

  @Test
  void reachesATlsGatewayTrustedThroughItsCa() throws Exception {
    Path keystore = tmp.resolve("origin.p12");
    Path ca = tmp.resolve("ca.pem");
    keytool(
        "-genkeypair",
        "-alias",
        "origin",
        "-keyalg",
        "EC",
        "-groupname",
        "secp256r1",
        "-dname",
        "CN=localhost",
        "-ext",
        "SAN=dns:localhost,ip:127.0.0.1",
        "-validity",
        "2",
        "-keystore",
        keystore.toString(),
        "-storepass",
        "changeit",
        "-storetype",
        "PKCS12");
    keytool(
        "-exportcert",
        "-rfc",
        "-alias",
        "origin",
        "-keystore",
        keystore.toString(),
        "-storepass",
        "changeit",
        "-file",
        ca.toString());
    origin = Origin.tls(keystore);
    relay =
        GitRelay.start(
            VERTX,
            tmp.resolve("git.sock"),
            URI.create("https://localhost:" + origin.port() + "/owner/repo.git"),
            TOKEN,
            new PemTrustOptions().addCertPath(ca.toString()),
            records::add);

    String answer =
        exchange(
            "GET /owner/repo.git/info/refs?service=git-receive-pack HTTP/1.1\r\nHost: x\r\n\r\n");

    assertTrue(answer.startsWith("HTTP/1.1 200 "), answer);
    assertTrue(origin.awaitRequest().contains("Host: localhost:" + origin.port() + "\r\n"));
  }

  @Test
  void refusesATlsGatewayItDoesNotTrust() throws Exception {
    Path keystore = tmp.resolve("origin.p12");
    keytool(
        "-genkeypair",
        "-alias",
        "origin",
        "-keyalg",
        "EC",
        "-groupname",
        "secp256r1",
        "-dname",
        "CN=localhost",
        "-ext",
        "SAN=dns:localhost",
        "-validity",
        "2",
        "-keystore",
        keystore.toString(),
        "-storepass",
        "changeit",
        "-storetype",
        "PKCS12");
    origin = Origin.tls(keystore);
    relay =
        GitRelay.start(
            VERTX,
            tmp.resolve("git.sock"),
            URI.create("https://localhost:" + origin.port() + "/owner/repo.git"),
            TOKEN,
            null,
            records::add);

    String answer =
        exchange(
            "GET /owner/repo.git/info/refs?service=git-upload-pack HTTP/1.1\r\nHost: x\r\n\r\n");

    assertTrue(answer.startsWith("HTTP/1.1 502 "), answer);
    assertFalse(answer.contains(TOKEN));
    EgressRecord record = awaitRecord();
    assertTrue(record.failure().startsWith("cannot reach the gateway"), record.toString());
  }

  @Test
  void refusesCloneUrlsItCannotServeSafely() {
    for (String url :
        List.of(
            "ssh://host/repo.git",
            "http://user:pw@host/repo.git",
            "http://host/repo.git?x=1",
            "file:///srv/repo.git")) {
      try {
        GitRelay.originOf(URI.create(url));
        throw new AssertionError("accepted " + url);
      } catch (IllegalArgumentException expected) {
        assertTrue(expected.getMessage().contains("clone URL"), expected.getMessage());
      }
    }
  }

  // --- helpers
  // -------------------------------------------------------------------------------------------------

  private void startPlain() throws IOException {
    origin = Origin.plain();
    relay =
        GitRelay.start(
            VERTX,
            tmp.resolve("git.sock"),
            URI.create("http://127.0.0.1:" + origin.port() + "/owner/repo.git"),
            TOKEN,
            null,
            records::add);
  }

  /**
   * Sends raw bytes as the container's socat would and reads the whole answer (the relay closes
   * after it).
   */
  private String exchange(String request) throws IOException {
    try (SocketChannel channel =
        SocketChannel.open(UnixDomainSocketAddress.of(relay.socketPath()))) {
      channel.write(ByteBuffer.wrap(request.getBytes(StandardCharsets.ISO_8859_1)));
      ByteArrayOutputStream out = new ByteArrayOutputStream();
      ByteBuffer buf = ByteBuffer.allocate(8192);
      while (channel.read(buf) >= 0) {
        out.write(buf.array(), 0, buf.position());
        buf.clear();
      }
      return out.toString(StandardCharsets.ISO_8859_1);
    }
  }

  private EgressRecord awaitRecord() throws InterruptedException {
    awaitRecords(1);
    return records.get(0);
  }

  private void awaitRecords(int count) throws InterruptedException {
    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (records.size() < count && System.nanoTime() < until) {
      Thread.sleep(20);
    }
    assertTrue(records.size() >= count, "records: " + records);
  }

  private static List<String> header(String head, String name) {
    return head.lines()
        .filter(l -> l.toLowerCase(Locale.ROOT).startsWith(name + ":"))
        .map(l -> l.substring(name.length() + 1).strip())
        .toList();
  }

  private static void keytool(String... args) throws Exception {
    List<String> command =
        new java.util.ArrayList<>(
            List.of(Path.of(System.getProperty("java.home"), "bin", "keytool").toString()));
    command.addAll(List.of(args));
    Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
    String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertEquals(0, process.waitFor(), output);
  }

  /** Answers every request with 200 "origin body" and records what it received (head and body). */
  static final class Origin implements AutoCloseable {

    final List<String> requests = new CopyOnWriteArrayList<>();
    private final ServerSocket server;
    private final Thread acceptor;

    private Origin(ServerSocket server) {
      this.server = server;
      this.acceptor = new Thread(this::serve, "origin");
      this.acceptor.setDaemon(true);
      this.acceptor.start();
    }

    static Origin plain() throws IOException {
      return new Origin(new ServerSocket(0, 16, InetAddress.getLoopbackAddress()));
    }

    static Origin tls(Path keystore) throws Exception {
      KeyStore store = KeyStore.getInstance("PKCS12");
      try (InputStream in = Files.newInputStream(keystore)) {
        store.load(in, "changeit".toCharArray());
      }
      KeyManagerFactory keys =
          KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
      keys.init(store, "changeit".toCharArray());
      SSLContext context = SSLContext.getInstance("TLS");
      context.init(keys.getKeyManagers(), null, null);
      SSLServerSocket server =
          (SSLServerSocket)
              context
                  .getServerSocketFactory()
                  .createServerSocket(0, 16, InetAddress.getLoopbackAddress());
      return new Origin(server);
    }

    int port() {
      return server.getLocalPort();
    }

    String awaitRequest() throws InterruptedException {
      long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      while (requests.isEmpty() && System.nanoTime() < until) {
        Thread.sleep(20);
      }
      assertFalse(requests.isEmpty(), "the origin got no request");
      return requests.get(0);
    }

    private void serve() {
      while (!server.isClosed()) {
        try (Socket socket = server.accept()) {
          socket.setSoTimeout(5000);
          String received = readRequest(socket.getInputStream());
          requests.add(received);
          OutputStream out = socket.getOutputStream();
          out.write(
              ("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 11\r\nConnection: close\r\n"
                      + "\r\norigin body")
                  .getBytes(StandardCharsets.ISO_8859_1));
          out.flush();
        } catch (IOException e) {
          // A failed handshake or a closed server: next connection.
        }
      }
    }

    private static String readRequest(InputStream in) throws IOException {
      ByteArrayOutputStream seen = new ByteArrayOutputStream();
      int b;
      while ((b = in.read()) >= 0) {
        seen.write(b);
        String text = seen.toString(StandardCharsets.ISO_8859_1);
        if (text.endsWith("\r\n\r\n")) {
          int length =
              text.lines()
                  .filter(l -> l.toLowerCase(Locale.ROOT).startsWith("content-length:"))
                  .mapToInt(l -> Integer.parseInt(l.substring(15).strip()))
                  .findFirst()
                  .orElse(0);
          seen.write(in.readNBytes(length));
          break;
        }
      }
      return seen.toString(StandardCharsets.ISO_8859_1);
    }

    @Override
    public void close() throws IOException {
      server.close();
    }
  }
}
