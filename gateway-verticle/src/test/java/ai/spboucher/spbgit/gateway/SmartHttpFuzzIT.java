package ai.spboucher.spbgit.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import ai.spboucher.spbgit.hooks.Fuzz;
import ai.spboucher.spbgit.hooks.GitRefFormat;
import ai.spboucher.spbgit.hooks.RefNameFuzz;
import ai.spboucher.spbgit.testsupport.GitCli;
import io.vertx.core.json.JsonObject;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.zip.GZIPInputStream;
import java.util.zip.GZIPOutputStream;
import org.eclipse.jgit.lib.ObjectId;
import org.eclipse.jgit.lib.Ref;
import org.eclipse.jgit.lib.Repository;
import org.eclipse.jgit.storage.file.FileRepositoryBuilder;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Generated git smart-HTTP requests against a real gateway: pkt-line bodies with random and invalid
 * lengths, flush and delim packets, oversize lines, truncation, receive-pack commands with bad ref
 * names, bad ids and capability garbage, corrupt packs and gzip, with no, owner, job and bad
 * credentials. After every request: no 5xx, a 4xx carries a JSON error, and every ref that changed
 * was changed by a well-formed command its pusher was allowed to make; a job token never writes
 * outside {@code refs/agents/<job>/}. At the end the gateway still serves a real {@code git clone},
 * and no object was added or lost.
 */
class SmartHttpFuzzIT {

  private static final int TRIES = 300;
  private static final long PUSH_LIMIT = 256 << 10;
  private static final String JOB = "fz";
  private static final String ZERO = "0".repeat(40);
  private static final String RECEIVE_TYPE = "application/x-git-receive-pack-request";
  private static final String UPLOAD_TYPE = "application/x-git-upload-pack-request";
  private static final List<String> CAPABILITIES =
      List.of(
          "report-status",
          "report-status-v2",
          "side-band-64k",
          "side-band",
          "atomic",
          "delete-refs",
          "ofs-delta",
          "quiet",
          "push-options",
          "agent=git/2.39.5",
          "object-format=sha1",
          "object-format=sha256",
          "push-cert=x",
          "no-thin",
          "session-id=\u00e9",
          "=",
          " ");

  @TempDir static Path tmp;
  static TestGateway gateway;
  static GitCli git;
  static String head;
  static Map<Credential, String> credentials;
  static byte[] emptyPack;

  /**
   * HTTP/1.1, as git speaks it over plain HTTP (the JDK client would otherwise try an h2c upgrade).
   */
  static final HttpClient HTTP =
      HttpClient.newBuilder()
          .version(HttpClient.Version.HTTP_1_1)
          .connectTimeout(Duration.ofSeconds(5))
          .build();

  /** Who a request claims to be. */
  enum Credential {
    NONE,
    OWNER,
    JOB,
    JOB_OTHER_REPO,
    JOB_REVOKED,
    JOB_MUTATED,
    GARBAGE,
    MALFORMED_HEADER
  }

  /** One generated request and the bytes it sent. */
  record Attempt(
      String method,
      String path,
      Credential credential,
      String contentType,
      String contentEncoding,
      String gitProtocol,
      boolean chunked,
      byte[] body) {
    @Override
    public String toString() {
      return method
          + " "
          + path
          + " as "
          + credential
          + ", type "
          + contentType
          + ", encoding "
          + contentEncoding
          + ", Git-Protocol "
          + gitProtocol
          + (chunked ? ", chunked" : "")
          + ", body "
          + (body == null ? "none" : Fuzz.show(body));
    }
  }

  /** One receive-pack command as sent. */
  record Command(String oldId, String newId, String ref) {}

  /**
   * The command section of a strictly well-formed receive-pack body, and what followed its flush.
   */
  record Commands(List<Command> commands, Set<String> capabilities, byte[] rest) {}

  @BeforeAll
  static void startGateway() throws Exception {
    gateway =
        TestGateway.start(
            tmp.resolve("data"), new JsonObject().put("maxPushBytes", String.valueOf(PUSH_LIMIT)));
    git = new GitCli(Files.createDirectories(tmp.resolve("home")));
    gateway.createRepo("demo");
    gateway.createRepo("other");
    Path work = git.workTree(tmp, "work");
    git.ok(work, "push", "-q", gateway.pushUrl("demo", gateway.ownerToken), "main");
    head = git.ok(work, "rev-parse", "HEAD").output().strip();
    String job = gateway.jobToken("demo", JOB, 3600);
    git.ok(
        work, "push", "-q", gateway.pushUrl("demo", job), "main:refs/agents/" + JOB + "/existing");
    String revoked = gateway.jobToken("demo", JOB, 3600);
    String jti = ForgedTokens.claimsOf(revoked).getString("jti");
    assertEquals(
        204,
        gateway.api("DELETE", "/api/v1/job-tokens/" + jti, gateway.ownerToken, null).statusCode());
    char[] mutated = job.toCharArray();
    mutated[mutated.length - 5] ^= 0x01;
    credentials = new HashMap<>();
    credentials.put(Credential.OWNER, gateway.ownerToken);
    credentials.put(Credential.JOB, job);
    credentials.put(Credential.JOB_OTHER_REPO, gateway.jobToken("other", JOB, 3600));
    credentials.put(Credential.JOB_REVOKED, revoked);
    credentials.put(Credential.JOB_MUTATED, new String(mutated));
    credentials.put(Credential.GARBAGE, "spbpat_not-a-token");
    emptyPack = PktLines.emptyPack();
  }

  @AfterAll
  static void stopGateway() {
    if (gateway != null) {
      gateway.close();
    }
  }

  @Test
  void malformedRequestsNeverCrashChangeRefsOrPassTheGate() throws Exception {
    long seed = Fuzz.seed();
    int tries = Fuzz.tries(TRIES);
    Map<String, String> objectsBefore = Map.of("demo", objects("demo"), "other", objects("other"));
    Map<Integer, Integer> statuses = new TreeMap<>();
    int refChanges = 0;
    for (int i = 0; i < tries; i++) {
      Attempt attempt = null;
      try {
        attempt = attempt(Fuzz.randomFor(seed, i));
        Map<String, Map<String, String>> before =
            Map.of("demo", refs("demo"), "other", refs("other"));
        HttpResponse<byte[]> response = send(attempt);
        statuses.merge(response.statusCode(), 1, Integer::sum);
        checkResponse(attempt, response);
        for (String repo : before.keySet()) {
          refChanges += checkRefChanges(attempt, repo, before.get(repo), refs(repo));
        }
      } catch (Throwable failure) {
        fail(
            Fuzz.failureMessage(
                "smart HTTP fuzz",
                seed,
                i,
                tries,
                attempt == null ? "(the generator failed)" : attempt.toString(),
                failure),
            failure);
      }
    }
    System.out.println(
        "smart HTTP fuzz, seed "
            + seed
            + ": "
            + tries
            + " requests, statuses "
            + statuses
            + ", "
            + refChanges
            + " ref changes by well-formed pushes");
    for (String repo : objectsBefore.keySet()) {
      assertEquals(
          objectsBefore.get(repo), objects(repo), "objects of " + repo + " were added or lost");
    }
    assertGatewayStillServes();
  }

  /**
   * The control: well-formed pushes sent the same way do change refs, and the checks accept them.
   */
  @Test
  void wellFormedPushesSentTheSameWayAreCarriedOut() throws Exception {
    String jobRef = "refs/agents/" + JOB + "/control";
    String ownerRef = "refs/heads/control";
    for (Credential credential : List.of(Credential.JOB, Credential.OWNER)) {
      String ref = credential == Credential.JOB ? jobRef : ownerRef;
      Attempt attempt =
          new Attempt(
              "POST",
              "/demo.git/git-receive-pack",
              credential,
              RECEIVE_TYPE,
              null,
              null,
              false,
              PktLines.createRef(ref, head, "report-status"));
      Map<String, String> before = refs("demo");
      HttpResponse<byte[]> response = send(attempt);
      checkResponse(attempt, response);
      assertEquals(200, response.statusCode());
      assertEquals(1, checkRefChanges(attempt, "demo", before, refs("demo")));
      assertEquals(head, refs("demo").get(ref));
    }
    Attempt delete =
        new Attempt(
            "POST",
            "/demo.git/git-receive-pack",
            Credential.OWNER,
            RECEIVE_TYPE,
            null,
            null,
            false,
            new PktLines()
                .line(head + " " + ZERO + " " + ownerRef + "\0report-status delete-refs\n")
                .flush()
                .bytes());
    Map<String, String> before = refs("demo");
    assertEquals(200, send(delete).statusCode());
    assertEquals(1, checkRefChanges(delete, "demo", before, refs("demo")));
    assertEquals(null, refs("demo").get(ownerRef));

    Attempt outside =
        new Attempt(
            "POST",
            "/demo.git/git-receive-pack",
            Credential.JOB,
            RECEIVE_TYPE,
            null,
            null,
            false,
            PktLines.createRef("refs/heads/control-job", head, "report-status"));
    before = refs("demo");
    checkResponse(outside, send(outside));
    assertEquals(before, refs("demo"));
  }

  // ---- generation ----

  private static Attempt attempt(Random random) throws IOException {
    Credential credential = Credential.values()[random.nextInt(Credential.values().length)];
    if (random.nextInt(3) == 0) {
      // Pushes with the job token are the gate's real adversary: give them extra weight.
      credential = Credential.JOB;
    }
    int kind = random.nextInt(20);
    if (kind < 2) {
      String service =
          List.of(
                  "git-upload-pack",
                  "git-receive-pack",
                  "git-upload-archive",
                  "",
                  "git-receive-pack\0",
                  "GIT-RECEIVE-PACK")
              .get(random.nextInt(6));
      return new Attempt(
          "GET",
          "/" + repo(random) + ".git/info/refs?service=" + urlEncode(service),
          credential,
          null,
          null,
          gitProtocol(random),
          false,
          null);
    }
    boolean receive = kind < 14;
    // The owner may rewrite main; keeping it fixed lets the final clone check what it serves.
    boolean mayNameMain = credential != Credential.OWNER;
    byte[] body = receive ? receivePackBody(random, mayNameMain) : uploadPackBody(random);
    if (random.nextInt(4) == 0) {
      body = mutateBytes(random, body);
    }
    String encoding = null;
    if (random.nextInt(10) == 0) {
      encoding = List.of("gzip", "x-gzip", "identity", "br", "GZIP").get(random.nextInt(5));
      if (encoding.equalsIgnoreCase("gzip") || encoding.equals("x-gzip")) {
        body = gzip(body);
        if (random.nextBoolean()) {
          body = Arrays.copyOf(body, random.nextInt(body.length + 1));
        }
      }
    }
    String type = random.nextInt(25) == 0 ? "text/plain" : receive ? RECEIVE_TYPE : UPLOAD_TYPE;
    return new Attempt(
        "POST",
        "/" + repo(random) + ".git/" + (receive ? "git-receive-pack" : "git-upload-pack"),
        credential,
        type,
        encoding,
        gitProtocol(random),
        random.nextInt(8) == 0,
        body);
  }

  private static String repo(Random random) {
    return random.nextInt(15) == 0 ? "other" : "demo";
  }

  private static String gitProtocol(Random random) {
    return switch (random.nextInt(6)) {
      case 0 -> "version=2";
      case 1 -> "version=1";
      case 2 ->
          "version=2:object-format=sha256:"
              + randomText(random, 8).replaceAll("[^\\x21-\\x7e]", "x");
      default -> null;
    };
  }

  private static byte[] receivePackBody(Random random, boolean mayNameMain) throws IOException {
    if (random.nextInt(30) == 0) {
      return oversizeBody(random);
    }
    if (random.nextInt(5) < 2) {
      return wellFramedPush(random, mayNameMain);
    }
    PktLines body = new PktLines();
    int commands = 1 + random.nextInt(4);
    for (int i = 0; i < commands; i++) {
      String line =
          objectId(random, true)
              + " "
              + objectId(random, false)
              + " "
              + refName(random, mayNameMain);
      if (i == 0) {
        line += "\0" + capabilities(random);
      }
      body.line(random.nextInt(10) == 0 ? line : line + "\n");
    }
    if (random.nextInt(10) != 0) {
      body.flush();
    }
    return body.raw(pack(random)).bytes();
  }

  /**
   * A push that is well formed but for its ref names (and sometimes a stale old id): the gate, not
   * the parser, has to stop it.
   */
  private static byte[] wellFramedPush(Random random, boolean mayNameMain) {
    PktLines body = new PktLines();
    int commands = 1 + random.nextInt(3);
    boolean anyNew = false;
    for (int i = 0; i < commands; i++) {
      boolean delete = random.nextInt(4) == 0;
      anyNew |= !delete;
      String oldId = delete || random.nextInt(4) == 0 ? head : ZERO;
      String line = oldId + " " + (delete ? ZERO : head) + " " + refName(random, mayNameMain);
      if (i == 0) {
        line +=
            "\0"
                + String.join(
                    " ",
                    List.of("report-status", "side-band-64k", "atomic", "delete-refs", "quiet")
                        .subList(0, 1 + random.nextInt(5)));
      }
      body.line(line + "\n");
    }
    return body.flush().raw(anyNew ? emptyPack : new byte[0]).bytes();
  }

  private static byte[] uploadPackBody(Random random) {
    PktLines body = new PktLines();
    if (random.nextBoolean()) {
      body.line(
          "command="
              + List.of("ls-refs", "fetch", "object-info", "bundle-uri", "evil")
                  .get(random.nextInt(5))
              + "\n");
      body.line("agent=git/2.39.5\n");
      body.raw("0001".getBytes(StandardCharsets.US_ASCII));
    }
    int lines = random.nextInt(6);
    for (int i = 0; i < lines; i++) {
      body.line(
          switch (random.nextInt(9)) {
            case 0, 1 ->
                "want "
                    + objectId(random, false)
                    + (i == 0 ? " " + capabilities(random) : "")
                    + "\n";
            case 2 -> "have " + objectId(random, false) + "\n";
            case 3 ->
                "deepen "
                    + List.of("1", "0", "-1", "99999999999", "x").get(random.nextInt(5))
                    + "\n";
            case 4 ->
                "filter "
                    + List.of("blob:none", "tree:0", "sparse:oid=" + head, "x")
                        .get(random.nextInt(4))
                    + "\n";
            case 5 -> "ref-prefix " + refName(random, true) + "\n";
            case 6 -> "shallow " + objectId(random, false) + "\n";
            case 7 -> "peel\n";
            default -> "done\n";
          });
    }
    body.flush();
    if (random.nextBoolean()) {
      body.line("done\n");
    }
    return body.bytes();
  }

  private static String objectId(Random random, boolean old) {
    return switch (random.nextInt(12)) {
      case 0, 1, 2 -> old ? ZERO : head;
      case 3, 4 -> old ? head : ZERO;
      case 5 -> randomHex(random, 40);
      case 6 -> randomHex(random, 39 + 2 * random.nextInt(2));
      case 7 -> head.toUpperCase(Locale.ROOT);
      case 8 -> "z".repeat(40);
      case 9 -> "";
      case 10 -> randomHex(random, 64);
      default -> old ? ZERO : head;
    };
  }

  private static String refName(Random random, boolean mayNameMain) {
    return switch (random.nextInt(12)) {
      case 0, 1, 2 -> "refs/agents/" + JOB + "/" + RefNameFuzz.validSuffix(random);
      case 3 -> "refs/agents/" + JOB + "/existing";
      case 4, 5 -> RefNameFuzz.aimedAt(random, JOB);
      case 6 -> RefNameFuzz.mutated(random, JOB);
      case 7 -> RefNameFuzz.arbitrary(random);
      case 8 -> mayNameMain ? "refs/heads/main" : "refs/heads/main2";
      case 9 -> "refs/heads/fuzz-" + random.nextInt(5);
      case 10 -> "refs/agents/" + RefNameFuzz.jobId(random) + "/proposal";
      default ->
          List.of("refs/tags/v1", "HEAD", "refs/agents/" + JOB, "refs/meta/config")
              .get(random.nextInt(4));
    };
  }

  private static String capabilities(Random random) {
    List<String> caps = new ArrayList<>();
    int count = random.nextInt(5);
    for (int i = 0; i < count; i++) {
      caps.add(
          random.nextInt(6) == 0
              ? randomText(random, 1 + random.nextInt(12))
              : CAPABILITIES.get(random.nextInt(CAPABILITIES.size())));
    }
    return String.join(random.nextInt(10) == 0 ? "  " : " ", caps);
  }

  private static byte[] pack(Random random) {
    return switch (random.nextInt(10)) {
      case 0 -> new byte[0];
      case 1 -> Arrays.copyOf(emptyPack, random.nextInt(emptyPack.length));
      case 2 -> {
        byte[] corrupt = emptyPack.clone();
        corrupt[random.nextInt(corrupt.length)] ^= (byte) (1 << random.nextInt(8));
        yield corrupt;
      }
      case 3 -> randomBytes(random, random.nextInt(200));
      case 4 -> {
        // A header announcing objects that never come, or a pack with bytes after its trailer.
        byte[] announce = emptyPack.clone();
        announce[11] = (byte) (1 + random.nextInt(255));
        yield random.nextBoolean()
            ? announce
            : concat(emptyPack, randomBytes(random, 1 + random.nextInt(20)));
      }
      default -> emptyPack;
    };
  }

  private static byte[] oversizeBody(Random random) {
    PktLines commands = new PktLines();
    for (int i = 0; commands.bytes().length < PUSH_LIMIT + 1024; i++) {
      commands.line(
          ZERO
              + " "
              + head
              + " refs/agents/"
              + JOB
              + "/flood-"
              + i
              + (i == 0 ? "\0report-status" : "")
              + "\n");
    }
    return commands.flush().raw(emptyPack).bytes();
  }

  /**
   * Damages a body at the byte level: pkt-line lengths, special packets, oversize lines,
   * truncation, bit flips.
   */
  private static byte[] mutateBytes(Random random, byte[] body) {
    int at = body.length == 0 ? 0 : random.nextInt(body.length + 1);
    return switch (random.nextInt(9)) {
      case 0 -> Arrays.copyOf(body, at);
      case 1 -> {
        byte[] flipped = body.clone();
        if (flipped.length > 0) {
          flipped[random.nextInt(flipped.length)] ^= (byte) (1 << random.nextInt(8));
        }
        yield flipped;
      }
      case 2 ->
          splice(
              body,
              at,
              List.of(
                      "0000", "0001", "0002", "0003", "0004", "0005", "000", "zzzz", "-001", "ffff",
                      "FFF0", "fff1", "0x10", " 010")
                  .get(random.nextInt(14))
                  .getBytes(StandardCharsets.US_ASCII));
      case 3 -> {
        // One line at, or just over, the largest pkt-line (65520 bytes including the length).
        int size = 65516 + random.nextInt(3);
        byte[] line = new byte[4 + Math.min(size, 65520)];
        System.arraycopy(
            String.format("%04x", Math.min(size + 4, 0xffff)).getBytes(StandardCharsets.US_ASCII),
            0,
            line,
            0,
            4);
        Arrays.fill(line, 4, line.length, (byte) 'a');
        yield splice(body, at, line);
      }
      case 4 -> {
        // A length that promises more than the body holds.
        yield concat(
            body,
            String.format("%04x", 5 + random.nextInt(0xfff0)).getBytes(StandardCharsets.US_ASCII));
      }
      case 5 -> splice(body, at, randomBytes(random, 1 + random.nextInt(16)));
      case 6 -> concat(body, body);
      case 7 -> randomBytes(random, random.nextInt(64));
      default ->
          splice(body, at, new PktLines().line(randomText(random, random.nextInt(40))).bytes());
    };
  }

  // ---- sending and checking ----

  private static HttpResponse<byte[]> send(Attempt attempt) throws Exception {
    HttpRequest.Builder request =
        HttpRequest.newBuilder(URI.create(gateway.baseUrl + attempt.path()))
            .timeout(Duration.ofSeconds(60));
    if (attempt.body() == null) {
      request.GET();
    } else if (attempt.chunked()) {
      request.POST(
          HttpRequest.BodyPublishers.ofInputStream(() -> new ByteArrayInputStream(attempt.body())));
    } else {
      request.POST(HttpRequest.BodyPublishers.ofByteArray(attempt.body()));
    }
    if (attempt.contentType() != null) {
      request.header("Content-Type", attempt.contentType());
    }
    if (attempt.contentEncoding() != null) {
      request.header("Content-Encoding", attempt.contentEncoding());
    }
    if (attempt.gitProtocol() != null) {
      request.header("Git-Protocol", attempt.gitProtocol());
    }
    if (attempt.credential() == Credential.MALFORMED_HEADER) {
      request.header("Authorization", "Basic !!!not-base64");
    } else if (attempt.credential() != Credential.NONE) {
      request.header("Authorization", JobTokenGateIT.basic(credentials.get(attempt.credential())));
    }
    return HTTP.send(request.build(), HttpResponse.BodyHandlers.ofByteArray());
  }

  private static void checkResponse(Attempt attempt, HttpResponse<byte[]> response) {
    int status = response.statusCode();
    String text = new String(response.body(), StandardCharsets.UTF_8);
    assertTrue(status < 500, "server error " + status + ": " + text);
    if (status >= 400) {
      assertEquals(
          "application/json", response.headers().firstValue("Content-Type").orElse(""), text);
      assertNotNull(new JsonObject(text).getString("error"), text);
    }
    if (status == 200 && attempt.path().endsWith("/git-receive-pack")) {
      assertTrue(
          mayPushTo(
              attempt.credential(), attempt.path().startsWith("/demo.git/") ? "demo" : "other"),
          "a push was served for " + attempt.credential());
    }
  }

  /**
   * Whether the credential may push to {@code repo} at all: the owner, or a job token scoped to it.
   */
  private static boolean mayPushTo(Credential credential, String repo) {
    return credential == Credential.OWNER
        || credential == Credential.JOB && repo.equals("demo")
        || credential == Credential.JOB_OTHER_REPO && repo.equals("other");
  }

  /**
   * Every ref of {@code repo} that changed must have been changed by a well-formed command its
   * pusher may make.
   */
  private static int checkRefChanges(
      Attempt attempt, String repo, Map<String, String> before, Map<String, String> after)
      throws IOException {
    Set<String> changed = new HashSet<>(before.keySet());
    changed.addAll(after.keySet());
    changed.removeIf(ref -> Objects.equals(before.get(ref), after.get(ref)));
    if (changed.isEmpty()) {
      return 0;
    }
    Commands commands = wellFormedPush(attempt, repo);
    assertNotNull(commands, "refs changed by a request that is not a well-formed push: " + changed);
    if (commands.capabilities().contains("atomic")) {
      // All or nothing: every command, applied in order, must be one the pusher may make.
      Map<String, String> state = new HashMap<>(before);
      for (Command command : commands.commands()) {
        assertTrue(
            permitted(attempt.credential(), repo, command, commands)
                && matchesOld(command, state.getOrDefault(command.ref(), ZERO)),
            "an atomic push changed refs although it holds a command that must fail: " + command);
        state.put(command.ref(), command.newId());
      }
    }
    for (String ref : changed) {
      // The values the ref can take through its permitted commands, applied in order from where it
      // was.
      Set<String> reachable = new HashSet<>(List.of(before.getOrDefault(ref, ZERO)));
      for (Command command : commands.commands()) {
        if (command.ref().equals(ref)
            && permitted(attempt.credential(), repo, command, commands)
            && reachable.stream().anyMatch(value -> matchesOld(command, value))) {
          reachable.add(command.newId());
        }
      }
      assertTrue(
          reachable.contains(after.getOrDefault(ref, ZERO)),
          "changed " + Fuzz.show(ref) + " though no permitted command leads there");
    }
    return changed.size();
  }

  /**
   * Whether {@code command} applies to a ref at {@code current}: its old id must match, except that
   * a delete naming the zero id deletes whatever is there (git and JGit both allow it, without
   * compare-and-swap).
   */
  private static boolean matchesOld(Command command, String current) {
    return command.oldId().equals(current)
        || command.oldId().equals(ZERO) && command.newId().equals(ZERO);
  }

  /** Whether the pusher may make {@code command} and the server can carry it out (ids aside). */
  private static boolean permitted(
      Credential credential, String repo, Command command, Commands commands) throws IOException {
    boolean authorized =
        mayPushTo(credential, repo)
            && (credential == Credential.OWNER
                || GitRefFormat.insideAgentScope(JOB, command.ref()));
    boolean deletesOnly = commands.commands().stream().allMatch(c -> c.newId().equals(ZERO));
    byte[] expectedPack = deletesOnly ? new byte[0] : emptyPack;
    return authorized
        && GitRefFormat.accepts(command.ref())
        && (command.newId().equals(ZERO) || exists(repo, command.newId()))
        && Arrays.equals(commands.rest(), expectedPack);
  }

  /**
   * The commands of {@code attempt} if it is a push to {@code repo} with a strictly well-formed
   * body, else null.
   */
  private static Commands wellFormedPush(Attempt attempt, String repo) {
    if (!attempt.method().equals("POST")
        || !attempt.path().equals("/" + repo + ".git/git-receive-pack")
        || !RECEIVE_TYPE.equals(attempt.contentType())) {
      return null;
    }
    byte[] body = attempt.body();
    if (attempt.contentEncoding() != null && !attempt.contentEncoding().equals("identity")) {
      body = gunzip(body);
      if (body == null) {
        return null;
      }
    }
    return parseCommands(body);
  }

  /** A strict reading of a receive-pack command section: the test's own, not JGit's. */
  private static Commands parseCommands(byte[] body) {
    List<Command> commands = new ArrayList<>();
    Set<String> capabilities = new HashSet<>();
    int pos = 0;
    while (true) {
      if (pos + 4 > body.length) {
        return null;
      }
      String lengthHex = new String(body, pos, 4, StandardCharsets.ISO_8859_1);
      if (!lengthHex.matches("[0-9a-fA-F]{4}")) {
        return null;
      }
      int length = Integer.parseInt(lengthHex, 16);
      pos += 4;
      if (length == 0) {
        break;
      }
      if (length < 5 || length > 65520 || pos + length - 4 > body.length) {
        return null;
      }
      String line = text(Arrays.copyOfRange(body, pos, pos + length - 4));
      pos += length - 4;
      if (commands.isEmpty() && line.indexOf('\0') >= 0) {
        capabilities.addAll(List.of(line.substring(line.indexOf('\0') + 1).strip().split(" +")));
        line = line.substring(0, line.indexOf('\0'));
      }
      if (line.endsWith("\n")) {
        line = line.substring(0, line.length() - 1);
      }
      // Object ids in either case, as git and JGit read them.
      if (!line.matches("[0-9a-fA-F]{40} [0-9a-fA-F]{40} [^\\x00]+")) {
        return null;
      }
      commands.add(
          new Command(
              line.substring(0, 40).toLowerCase(Locale.ROOT),
              line.substring(41, 81).toLowerCase(Locale.ROOT),
              line.substring(82)));
    }
    return commands.isEmpty()
        ? null
        : new Commands(commands, capabilities, Arrays.copyOfRange(body, pos, body.length));
  }

  /** As JGit reads pkt-line text: UTF-8, or ISO-8859-1 when it is not. */
  private static String text(byte[] bytes) {
    try {
      return StandardCharsets.UTF_8
          .newDecoder()
          .onMalformedInput(CodingErrorAction.REPORT)
          .onUnmappableCharacter(CodingErrorAction.REPORT)
          .decode(ByteBuffer.wrap(bytes))
          .toString();
    } catch (CharacterCodingException e) {
      return new String(bytes, StandardCharsets.ISO_8859_1);
    }
  }

  private static boolean exists(String name, String id) throws IOException {
    try (Repository repo = open(name)) {
      return repo.getObjectDatabase().has(ObjectId.fromString(id));
    }
  }

  private static Map<String, String> refs(String name) throws IOException {
    // A fresh repository each time, so no cached ref state hides a change.
    try (Repository repo = open(name)) {
      Map<String, String> refs = new TreeMap<>();
      for (Ref ref : repo.getRefDatabase().getRefs()) {
        // HEAD and other symbolic refs only follow what they point at.
        if (!ref.isSymbolic() && ref.getObjectId() != null) {
          refs.put(ref.getName(), ref.getObjectId().name());
        }
      }
      return refs;
    }
  }

  private static Repository open(String name) throws IOException {
    return new FileRepositoryBuilder()
        .setGitDir(gateway.repoDir(name).toFile())
        .setMustExist(true)
        .build();
  }

  private static String objects(String repo) throws Exception {
    return git.ok(gateway.repoDir(repo), "count-objects", "-v")
        .output()
        .replaceAll("(?m)^(size|size-pack|size-garbage|prune-packable|garbage):.*$", "");
  }

  private static void assertGatewayStillServes() throws Exception {
    assertEquals(200, gateway.api("GET", "/healthz", null, null).statusCode());
    Path clone = tmp.resolve("clone-after-fuzz");
    git.ok(tmp, "clone", "-q", gateway.repoUrl("demo"), clone.toString());
    assertEquals(head, git.ok(clone, "rev-parse", "HEAD").output().strip());
    assertEquals("hello work\n", Files.readString(clone.resolve("README.md")));
  }

  // ---- bytes ----

  private static byte[] gzip(byte[] data) throws IOException {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    try (GZIPOutputStream gz = new GZIPOutputStream(out)) {
      gz.write(data);
    }
    return out.toByteArray();
  }

  private static byte[] gunzip(byte[] data) {
    try (GZIPInputStream in = new GZIPInputStream(new ByteArrayInputStream(data))) {
      return in.readAllBytes();
    } catch (IOException e) {
      return null;
    }
  }

  private static byte[] splice(byte[] bytes, int at, byte[] insert) {
    return concat(
        Arrays.copyOf(bytes, at), concat(insert, Arrays.copyOfRange(bytes, at, bytes.length)));
  }

  private static byte[] concat(byte[] a, byte[] b) {
    byte[] out = Arrays.copyOf(a, a.length + b.length);
    System.arraycopy(b, 0, out, a.length, b.length);
    return out;
  }

  private static byte[] randomBytes(Random random, int length) {
    byte[] bytes = new byte[length];
    random.nextBytes(bytes);
    return bytes;
  }

  private static String randomHex(Random random, int length) {
    StringBuilder out = new StringBuilder();
    for (int i = 0; i < length; i++) {
      out.append("0123456789abcdef".charAt(random.nextInt(16)));
    }
    return out.toString();
  }

  private static String randomText(Random random, int length) {
    StringBuilder out = new StringBuilder();
    for (int i = 0; i < length; i++) {
      out.append(
          (char) (random.nextInt(4) == 0 ? random.nextInt(0x100) : 0x21 + random.nextInt(0x5e)));
    }
    return out.toString();
  }

  private static String urlEncode(String text) {
    return java.net.URLEncoder.encode(text, StandardCharsets.UTF_8);
  }
}
