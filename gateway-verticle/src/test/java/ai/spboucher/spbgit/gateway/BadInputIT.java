package ai.spboucher.spbgit.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.spboucher.spbgit.testsupport.GitCli;
import io.vertx.core.json.JsonObject;
import java.io.ByteArrayOutputStream;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.zip.GZIPOutputStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Bad input gets a 4xx with a JSON error, the gateway keeps serving, and no repository changes:
 * each test snapshots the repository's refs and objects before and checks them after.
 */
class BadInputIT {

  private static final long PUSH_LIMIT = 256 << 10;
  private static final String UPLOAD_TYPE = "application/x-git-upload-pack-request";
  private static final String RECEIVE_TYPE = "application/x-git-receive-pack-request";

  @TempDir static Path tmp;
  static TestGateway gateway;
  static GitCli git;
  static Path work;
  static String head;
  private String refsBefore;
  private String objectsBefore;

  @BeforeAll
  static void startGateway() throws Exception {
    gateway =
        TestGateway.start(
            tmp.resolve("data"), new JsonObject().put("maxPushBytes", String.valueOf(PUSH_LIMIT)));
    git = new GitCli(Files.createDirectories(tmp.resolve("home")));
    gateway.createRepo("demo");
    work = git.workTree(tmp, "work");
    git.ok(work, "push", "-q", gateway.pushUrl("demo", gateway.ownerToken), "main");
    head = git.ok(work, "rev-parse", "HEAD").output().strip();
  }

  @AfterAll
  static void stopGateway() {
    gateway.close();
  }

  @BeforeEach
  void snapshot() throws Exception {
    refsBefore = git.refs(gateway.repoDir("demo"));
    objectsBefore = objects();
  }

  @AfterEach
  void nothingChangedAndStillServing() throws Exception {
    assertEquals(refsBefore, git.refs(gateway.repoDir("demo")));
    assertEquals(objectsBefore, objects());
    assertEquals(200, gateway.api("GET", "/api/v1/repos", null, null).statusCode());
    assertTrue(git.run(tmp, "ls-remote", gateway.repoUrl("demo")).output().contains(head));
  }

  @Test
  void malformedPktLinesToUploadPack() throws Exception {
    assert4xx(
        post(
            "git-upload-pack",
            UPLOAD_TYPE,
            null,
            "zzzzgarbage".getBytes(StandardCharsets.US_ASCII)),
        400);
    assert4xx(
        post("git-upload-pack", UPLOAD_TYPE, null, "0005".getBytes(StandardCharsets.US_ASCII)),
        400);
  }

  /**
   * Found by SmartHttpFuzzIT: JGit's ERR answer quoted the whole line, went out, and the response
   * was then cut.
   */
  @Test
  void longestPktLineThatIsNotAWantToUploadPack() throws Exception {
    byte[] line = new PktLines().line("a".repeat(65516)).flush().bytes();
    assert4xx(post("git-upload-pack", UPLOAD_TYPE, null, line), 400);
  }

  /**
   * Found by SmartHttpFuzzIT: JGit raised data after a fetch request as a corrupt object, which was
   * a 500.
   */
  @Test
  void dataAfterTheEndOfAFetchRequest() throws Exception {
    byte[] fetch = new PktLines().line("want " + head + "\n").flush().line("done\n").bytes();
    for (byte[] tail :
        List.of(
            new PktLines().line("done\n").bytes(),
            "0000".getBytes(StandardCharsets.US_ASCII),
            new byte[] {'x'})) {
      assert4xx(post("git-upload-pack", UPLOAD_TYPE, null, concat(fetch, tail)), 400);
    }
  }

  /**
   * Found by SmartHttpFuzzIT: JGit's protocol v2 parser wraps a bad pkt-line in an
   * UncheckedIOException (a 500).
   */
  @Test
  void malformedPktLineInAProtocolV2Command() throws Exception {
    byte[] body =
        new PktLines()
            .line("command=ls-refs\n")
            .raw("0001".getBytes(StandardCharsets.US_ASCII))
            .line("peel\n")
            .raw("0zz>".getBytes(StandardCharsets.US_ASCII))
            .flush()
            .bytes();
    HttpRequest request =
        HttpRequest.newBuilder(URI.create(gateway.repoUrl("demo") + "/git-upload-pack"))
            .header("Content-Type", UPLOAD_TYPE)
            .header("Git-Protocol", "version=2")
            .POST(HttpRequest.BodyPublishers.ofByteArray(body))
            .build();
    assert4xx(gateway.raw(request), 400);
  }

  @Test
  void malformedPktLinesToReceivePack() throws Exception {
    String owner = gateway.ownerToken;
    assert4xx(
        post(
            "git-receive-pack",
            RECEIVE_TYPE,
            owner,
            "zzzzgarbage".getBytes(StandardCharsets.US_ASCII)),
        400);
    assert4xx(
        post(
            "git-receive-pack",
            RECEIVE_TYPE,
            owner,
            new PktLines().line("not a command\n").flush().bytes()),
        400);
    byte[] valid = PktLines.createRef("refs/heads/truncated", head, "report-status");
    assert4xx(
        post("git-receive-pack", RECEIVE_TYPE, owner, Arrays.copyOf(valid, valid.length - 10)),
        400);
  }

  /**
   * Found by SmartHttpFuzzIT: JGit reads no pack for a delete-only push and ignored what followed
   * its commands.
   */
  @Test
  void deleteOnlyPushWithDataAfterTheCommands() throws Exception {
    byte[] delete =
        new PktLines()
            .line(head + " " + PktLines.ZERO_ID + " refs/heads/main\0report-status delete-refs\n")
            .flush()
            .bytes();
    for (byte[] tail :
        List.of(PktLines.emptyPack(), "junk".getBytes(StandardCharsets.US_ASCII), new byte[] {0})) {
      assert4xx(
          post("git-receive-pack", RECEIVE_TYPE, gateway.ownerToken, concat(delete, tail)), 400);
    }
    byte[] compressed = gzip(delete);
    // The commands inflate completely; only the gzip trailer (CRC and length) is cut off.
    assert4xx(
        postGzip(
            "git-receive-pack",
            RECEIVE_TYPE,
            gateway.ownerToken,
            Arrays.copyOf(compressed, compressed.length - 8)),
        400);
  }

  @Test
  void emptyBodies() throws Exception {
    assert4xx(post("git-upload-pack", UPLOAD_TYPE, null, new byte[0]), 400);
    assert4xx(post("git-receive-pack", RECEIVE_TYPE, gateway.ownerToken, new byte[0]), 400);
  }

  @Test
  void truncatedGzipStreams() throws Exception {
    byte[] want = new PktLines().line("want " + head + "\n").flush().line("done\n").bytes();
    assert4xx(postGzip("git-upload-pack", UPLOAD_TYPE, null, truncate(gzip(want))), 400);
    byte[] push = PktLines.createRef("refs/heads/gz", head, "report-status");
    assert4xx(
        postGzip("git-receive-pack", RECEIVE_TYPE, gateway.ownerToken, truncate(gzip(push))), 400);
    assert4xx(
        postGzip(
            "git-upload-pack",
            UPLOAD_TYPE,
            null,
            "not gzip at all".getBytes(StandardCharsets.UTF_8)),
        400);
  }

  @Test
  void bodyOverTheLimit() throws Exception {
    byte[] big = new byte[(int) PUSH_LIMIT * 2];
    new Random(1).nextBytes(big);
    assert4xx(post("git-receive-pack", RECEIVE_TYPE, gateway.ownerToken, big), 413);
    // A compressed body is limited by what it expands to: a few KB of gzip holding megabytes of
    // commands.
    PktLines commands = new PktLines();
    for (int i = 0; commands.bytes().length < PUSH_LIMIT * 4; i++) {
      commands.line(
          PktLines.ZERO_ID
              + " "
              + head
              + " refs/heads/flood-"
              + i
              + (i == 0 ? "\0report-status" : "")
              + "\n");
    }
    byte[] bomb = gzip(commands.flush().raw(PktLines.emptyPack()).bytes());
    assertTrue(bomb.length < PUSH_LIMIT, "the compressed body itself is under the limit");
    assert4xx(postGzip("git-receive-pack", RECEIVE_TYPE, gateway.ownerToken, bomb), 413);
  }

  @Test
  void pushOfAPackOverTheLimitWithTheGitClient() throws Exception {
    Path big = git.workTree(tmp, "big");
    byte[] noise = new byte[(int) PUSH_LIMIT * 2];
    new Random(2).nextBytes(noise);
    Files.write(big.resolve("noise.bin"), noise);
    git.ok(big, "add", ".");
    git.ok(big, "commit", "-q", "-m", "big");
    GitCli.Result r =
        git.run(big, "push", gateway.pushUrl("demo", gateway.ownerToken), "main:refs/heads/big");
    assertTrue(!r.ok(), r.output());
  }

  @Test
  void wrongContentTypeAndUnknownService() throws Exception {
    assert4xx(
        post("git-upload-pack", "text/plain", null, "0000".getBytes(StandardCharsets.US_ASCII)),
        415);
    assert4xx(gateway.api("GET", "/demo.git/info/refs?service=git-evil", null, null), 400);
    assert4xx(gateway.api("GET", "/demo.git/info/refs", null, null), 400);
    assert4xx(
        gateway.api("GET", "/demo.git/info/refs?service=git-upload-archive", null, null), 400);
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "/%2e%2e.git/info/refs?service=git-upload-pack",
        "/a%2Fb.git/info/refs?service=git-upload-pack",
        "/.hidden.git/info/refs?service=git-upload-pack",
        "/x%00y.git/info/refs?service=git-upload-pack",
        "/nope.git/info/refs?service=git-upload-pack",
        "/a/b.git/info/refs?service=git-upload-pack"
      })
  void badRepositoryNamesInGitUrls(String path) throws Exception {
    HttpResponse<String> r = gateway.api("GET", path, null, null);
    assertTrue(r.statusCode() >= 400 && r.statusCode() < 500, path + " -> " + r.statusCode());
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "../x",
        "%2e%2e",
        "a/b",
        "..",
        ".x",
        "-x",
        "x.git",
        "x.lock",
        "",
        " ",
        "a b",
        "x\u0000y",
        "x\ny",
        "\u00e9t\u00e9"
      })
  void badRepositoryNamesInTheApi(String name) throws Exception {
    assert4xx(
        gateway.api(
            "POST",
            "/api/v1/repos",
            gateway.ownerToken,
            new JsonObject().put("name", name).encode()),
        400);
  }

  @Test
  void badApiBodies() throws Exception {
    String owner = gateway.ownerToken;
    assert4xx(gateway.api("POST", "/api/v1/repos", owner, "{not json"), 400);
    assert4xx(gateway.api("POST", "/api/v1/repos", owner, "[1,2]"), 400);
    assert4xx(gateway.api("POST", "/api/v1/repos", owner, ""), 400);
    assert4xx(gateway.api("POST", "/api/v1/repos", owner, "{\"name\": 42}"), 400);
    assert4xx(
        gateway.api("POST", "/api/v1/repos", owner, "{\"name\":\"" + "a".repeat(101) + "\"}"), 400);
    assert4xx(
        gateway.api(
            "POST",
            "/api/v1/repos",
            owner,
            "{\"name\":\"x\",\"pad\":\"" + "a".repeat(70_000) + "\"}"),
        413);
    assert4xx(gateway.api("POST", "/api/v1/repos", owner, "{\"name\":\"demo\"}"), 409);
    assert4xx(gateway.api("POST", "/api/v1/tokens", owner, "{}"), 400);
    assert4xx(gateway.api("DELETE", "/api/v1/repos/nope", owner, null), 404);
    assert4xx(gateway.api("DELETE", "/api/v1/tokens/pat_nope", owner, null), 404);
    assert4xx(
        gateway.api("POST", "/api/v1/job-tokens", owner, "{\"repo\":\"demo\",\"job\":\"../x\"}"),
        400);
    assert4xx(
        gateway.api(
            "POST", "/api/v1/job-tokens", owner, "{\"repo\":\"demo\",\"job\":\"j\",\"ttl\":7201}"),
        400);
    assert4xx(gateway.api("GET", "/api/v1/nothing-here", owner, null), 404);
  }

  @Test
  void badCredentials() throws Exception {
    assert4xx(gateway.api("POST", "/api/v1/repos", null, "{\"name\":\"anon\"}"), 401);
    assert4xx(gateway.api("POST", "/api/v1/repos", "spbpat_wrong", "{\"name\":\"anon\"}"), 401);
    HttpResponse<byte[]> r =
        gateway.raw(
            HttpRequest.newBuilder(URI.create(gateway.baseUrl + "/api/v1/tokens"))
                .header("Authorization", "Basic !!!notbase64")
                .build());
    assertEquals(401, r.statusCode());
    HttpResponse<byte[]> r2 =
        gateway.raw(
            HttpRequest.newBuilder(URI.create(gateway.baseUrl + "/api/v1/tokens"))
                .header("Authorization", "Digest abc")
                .build());
    assertEquals(401, r2.statusCode());
  }

  private static void assert4xx(HttpResponse<?> response, int expected) {
    Object body = response.body();
    String text =
        body instanceof byte[] bytes
            ? new String(bytes, StandardCharsets.UTF_8)
            : String.valueOf(body);
    assertEquals(expected, response.statusCode(), text);
    assertNotNull(new JsonObject(text).getString("error"), text);
  }

  private static HttpResponse<byte[]> post(String service, String type, String token, byte[] body)
      throws Exception {
    return send(service, type, token, body, false);
  }

  private static HttpResponse<byte[]> postGzip(
      String service, String type, String token, byte[] body) throws Exception {
    return send(service, type, token, body, true);
  }

  private static HttpResponse<byte[]> send(
      String service, String type, String token, byte[] body, boolean gzip) throws Exception {
    HttpRequest.Builder b =
        HttpRequest.newBuilder(URI.create(gateway.repoUrl("demo") + "/" + service))
            .header("Content-Type", type)
            .POST(HttpRequest.BodyPublishers.ofByteArray(body));
    if (token != null) {
      b.header("Authorization", JobTokenGateIT.basic(token));
    }
    if (gzip) {
      b.header("Content-Encoding", "gzip");
    }
    return gateway.raw(b.build());
  }

  private static byte[] gzip(byte[] data) throws Exception {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    try (GZIPOutputStream gz = new GZIPOutputStream(out)) {
      gz.write(data);
    }
    return out.toByteArray();
  }

  private static byte[] concat(byte[] a, byte[] b) {
    byte[] out = Arrays.copyOf(a, a.length + b.length);
    System.arraycopy(b, 0, out, a.length, b.length);
    return out;
  }

  private static byte[] truncate(byte[] data) {
    return Arrays.copyOf(data, data.length * 2 / 3);
  }

  private static String objects() throws Exception {
    return git.ok(gateway.repoDir("demo"), "count-objects", "-v")
        .output()
        .replaceAll("(?m)^(size|size-pack|size-garbage|prune-packable|garbage):.*$", "");
  }
}
