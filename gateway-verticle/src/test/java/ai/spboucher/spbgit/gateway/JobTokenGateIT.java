package ai.spboucher.spbgit.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.spboucher.spbgit.testsupport.GitCli;
import ai.spboucher.spbgit.testsupport.ShiftedClock;
import io.vertx.core.json.JsonObject;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A job token can push its own {@code refs/agents/<job>/*} and nothing else: every test tries to
 * get past.
 */
class JobTokenGateIT {

  private static final String JOB = "job42";

  @TempDir static Path tmp;
  static TestGateway gateway;
  static GitCli git;
  static Path work;
  static String head;
  static ForgedTokens forged;

  /** The gateway's clock: a token's expiry passes without waiting for it. */
  static final ShiftedClock clock = new ShiftedClock();

  @BeforeAll
  static void startGateway() throws Exception {
    gateway = TestGateway.start(tmp.resolve("data"), new JsonObject(), clock);
    git = new GitCli(Files.createDirectories(tmp.resolve("home")));
    gateway.createRepo("demo");
    gateway.createRepo("other");
    work = git.workTree(tmp, "work");
    git.ok(work, "push", "-q", gateway.pushUrl("demo", gateway.ownerToken), "main");
    head = git.ok(work, "rev-parse", "HEAD").output().strip();
    // A commit the server does not have, so a push of it to any existing ref is a real update.
    git.ok(work, "checkout", "-q", "-b", "agent");
    git.ok(work, "commit", "-q", "--allow-empty", "-m", "agent change");
    git.ok(work, "checkout", "-q", "main");
    forged = new ForgedTokens(gateway.vertx, gateway.dataDir);
  }

  @AfterAll
  static void stopGateway() {
    gateway.close();
  }

  @Test
  void pushesItsProposal() throws Exception {
    String token = gateway.jobToken("demo", JOB, 300);
    git.ok(work, "push", gateway.pushUrl("demo", token), "main:refs/agents/" + JOB + "/proposal");
    assertTrue(
        git.refs(gateway.repoDir("demo")).contains("refs/agents/" + JOB + "/proposal " + head));
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "refs/heads/main",
        "refs/heads/agent-work",
        "refs/tags/v1",
        "refs/agents/other/proposal",
        "refs/agents/job4/proposal",
        "refs/agents/job42x/proposal",
        "refs/agents/job42",
        "refs/notes/commits",
        "refs/meta/config"
      })
  void refusesRefsOutsideItsScope(String ref) throws Exception {
    String token = gateway.jobToken("demo", JOB, 300);
    String before = git.refs(gateway.repoDir("demo"));
    GitCli.Result r = git.run(work, "push", gateway.pushUrl("demo", token), "agent:" + ref);
    assertFalse(r.ok(), r.output());
    assertTrue(r.output().contains("[remote rejected]"), r.output());
    assertTrue(
        r.output().contains("refs/agents/" + JOB + "/*"),
        "reason names the allowed scope: " + r.output());
    assertEquals(before, git.refs(gateway.repoDir("demo")));
  }

  /** Names the git client would refuse to send, so they go on the wire by hand. */
  @ParameterizedTest
  @ValueSource(
      strings = {
        "refs/agents/job42/../../heads/main",
        "refs/agents/job42/a..b",
        "refs/agents/job42/x@{1}",
        "refs/agents/job42/tab\there",
        "refs/agents/job42/ctl\u0001x",
        "refs/agents/job42/del\u007fx",
        "refs/agents/job42/x.lock",
        "refs/agents/job42/",
        "refs/agents/job42//x",
        "refs/agents/job42/.hidden",
        "refs/agents/job42/sp ace",
        "refs/agents/job42/x:y",
        "refs/agents/job42/x*"
      })
  void refusesInvalidRefNamesSentRaw(String ref) throws Exception {
    String token = gateway.jobToken("demo", JOB, 300);
    String before = git.refs(gateway.repoDir("demo"));
    HttpResponse<byte[]> response =
        receivePack("demo", token, PktLines.createRef(ref, head, "report-status"));
    String body = new String(response.body(), StandardCharsets.UTF_8);
    assertTrue(
        response.statusCode() >= 400 || body.contains("ng "), response.statusCode() + " " + body);
    assertFalse(body.contains("ok " + ref), body);
    assertEquals(before, git.refs(gateway.repoDir("demo")));
  }

  @Test
  void rawPushInsideScopeIsAdmitted() throws Exception {
    String token = gateway.jobToken("demo", JOB, 300);
    HttpResponse<byte[]> response =
        receivePack(
            "demo",
            token,
            PktLines.createRef("refs/agents/" + JOB + "/raw", head, "report-status"));
    assertEquals(200, response.statusCode());
    assertTrue(
        new String(response.body(), StandardCharsets.UTF_8)
            .contains("ok refs/agents/" + JOB + "/raw"));
  }

  @Test
  void refusesAnotherRepository() throws Exception {
    String token = gateway.jobToken("demo", JOB, 300);
    git.ok(work, "push", "-q", gateway.pushUrl("other", gateway.ownerToken), "main");
    String before = git.refs(gateway.repoDir("other"));
    GitCli.Result r =
        git.run(work, "push", gateway.pushUrl("other", token), "main:refs/agents/" + JOB + "/p");
    assertFalse(r.ok(), r.output());
    assertTrue(r.output().contains("403"), r.output());
    assertEquals(before, git.refs(gateway.repoDir("other")));
    assertEquals(
        403,
        receivePack(
                "other",
                token,
                PktLines.createRef("refs/agents/" + JOB + "/p", head, "report-status"))
            .statusCode());
  }

  @Test
  void atomicPushMixingAllowedAndRefusedRefsChangesNothing() throws Exception {
    String token = gateway.jobToken("demo", JOB, 300);
    String before = git.refs(gateway.repoDir("demo"));
    GitCli.Result r =
        git.run(
            work,
            "push",
            "--atomic",
            gateway.pushUrl("demo", token),
            "main:refs/agents/" + JOB + "/atomic",
            "main:refs/heads/sneaky");
    assertFalse(r.ok(), r.output());
    assertEquals(before, git.refs(gateway.repoDir("demo")));
  }

  @Test
  void nonAtomicPushAdmitsOnlyTheScopedRef() throws Exception {
    String token = gateway.jobToken("demo", JOB, 300);
    GitCli.Result r =
        git.run(
            work,
            "push",
            gateway.pushUrl("demo", token),
            "main:refs/agents/" + JOB + "/mixed",
            "main:refs/heads/sneaky2");
    assertFalse(r.ok(), r.output());
    String refs = git.refs(gateway.repoDir("demo"));
    assertTrue(refs.contains("refs/agents/" + JOB + "/mixed"), refs);
    assertFalse(refs.contains("refs/heads/sneaky2"), refs);
  }

  @Test
  void cannotCallTheApi() throws Exception {
    String token = gateway.jobToken("demo", JOB, 300);
    List<String[]> calls =
        List.of(
            new String[] {"POST", "/api/v1/repos", "{\"name\":\"evil\"}"},
            new String[] {"DELETE", "/api/v1/repos/demo", null},
            new String[] {"POST", "/api/v1/tokens", "{\"label\":\"evil\"}"},
            new String[] {
              "DELETE",
              "/api/v1/tokens/"
                  + gateway
                      .api("GET", "/api/v1/tokens", gateway.ownerToken, null)
                      .body()
                      .replaceAll("(?s).*\"id\":\"([^\"]+)\".*", "$1"),
              null
            },
            new String[] {"POST", "/api/v1/job-tokens", "{\"repo\":\"demo\",\"job\":\"x\"}"},
            new String[] {"PUT", "/api/v1/repos", "{}"},
            new String[] {"PATCH", "/api/v1/tokens", "{}"});
    for (String[] call : calls) {
      HttpResponse<String> r = gateway.api(call[0], call[1], token, call[2]);
      assertEquals(403, r.statusCode(), call[0] + " " + call[1]);
      assertEquals("job tokens cannot call the API", new JsonObject(r.body()).getString("error"));
    }
    assertEquals(403, gateway.api("GET", "/api/v1/tokens", token, null).statusCode());
    assertTrue(Files.exists(gateway.repoDir("demo")));
    assertFalse(Files.exists(gateway.repoDir("evil")));
    assertEquals(
        1,
        new io.vertx.core.json.JsonArray(
                gateway.api("GET", "/api/v1/tokens", gateway.ownerToken, null).body())
            .size());
  }

  @Test
  void expiredTokenIsRefused() throws Exception {
    String token = gateway.jobToken("demo", JOB, 2);
    git.ok(
        work,
        "push",
        "-q",
        gateway.pushUrl("demo", token),
        "main:refs/agents/" + JOB + "/before-expiry");
    clock.shift(Duration.ofSeconds(3));
    assertRefused(token, "expired");
  }

  @Test
  void revokedTokenIsRefused() throws Exception {
    String token = gateway.jobToken("demo", JOB, 300);
    git.ok(
        work,
        "push",
        "-q",
        gateway.pushUrl("demo", token),
        "main:refs/agents/" + JOB + "/before-revoke");
    String jti = ForgedTokens.claimsOf(token).getString("jti");
    assertEquals(
        204,
        gateway.api("DELETE", "/api/v1/job-tokens/" + jti, gateway.ownerToken, null).statusCode());
    assertRefused(token, "revoked");
  }

  @Test
  void forgedAndMisissuedTokensAreRefused() throws Exception {
    JsonObject valid = ForgedTokens.validClaims("demo", JOB);
    long now = valid.getLong("iat");
    // The control: the forging helper itself makes tokens the gateway accepts.
    git.ok(
        work,
        "push",
        "-q",
        gateway.pushUrl("demo", forged.signed(valid)),
        "main:refs/agents/" + JOB + "/ctl");

    assertRefused(ForgedTokens.tamperedSignature(forged.signed(valid)), "signature");
    assertRefused(
        ForgedTokens.tamperedPayload(
            forged.signed(valid),
            valid.copy().put("scope", new JsonObject().put("repo", "demo").put("refs", "refs/*"))),
        "signature");
    assertRefused(forged.algNone(valid), "algorithm");
    assertRefused(forged.hs256WithPublicKey(valid), "algorithm");
    assertRefused(forged.signed(valid.copy().put("aud", "someone-else")), "audience");
    assertRefused(forged.signed(valid.copy().put("iss", "https://evil.example")), "issuer");
    assertRefused(forged.signed(without(valid, "exp")), "exp");
    assertRefused(forged.signed(valid.copy().put("exp", now + 2 * 3600 + 60)), "lifetime");
    assertRefused(forged.signed(valid.copy().put("nbf", now + 600)), "not valid yet");
    assertRefused(forged.signed(valid.copy().put("sub", "other")), "scope");
    assertRefused(
        forged.signed(valid.copy().put("cap", new io.vertx.core.json.JsonArray().add("admin"))),
        "capability");
  }

  private static JsonObject without(JsonObject claims, String field) {
    JsonObject copy = claims.copy();
    copy.remove(field);
    return copy;
  }

  private static void assertRefused(String token, String reason) throws Exception {
    String before = git.refs(gateway.repoDir("demo"));
    GitCli.Result r =
        git.run(work, "push", gateway.pushUrl("demo", token), "main:refs/agents/" + JOB + "/late");
    assertFalse(r.ok(), r.output());
    assertEquals(before, git.refs(gateway.repoDir("demo")));
    HttpResponse<byte[]> response =
        gateway.raw(
            HttpRequest.newBuilder(
                    URI.create(gateway.repoUrl("demo") + "/info/refs?service=git-receive-pack"))
                .header("Authorization", basic(token))
                .build());
    String body = new String(response.body(), StandardCharsets.UTF_8);
    assertEquals(401, response.statusCode(), body);
    assertTrue(body.contains(reason), "refusal names '" + reason + "': " + body);
  }

  private static HttpResponse<byte[]> receivePack(String repo, String token, byte[] body)
      throws Exception {
    return gateway.raw(
        HttpRequest.newBuilder(URI.create(gateway.repoUrl(repo) + "/git-receive-pack"))
            .header("Authorization", basic(token))
            .header("Content-Type", "application/x-git-receive-pack-request")
            .POST(HttpRequest.BodyPublishers.ofByteArray(body))
            .build());
  }

  static String basic(String token) {
    return "Basic "
        + Base64.getEncoder().encodeToString(("agent:" + token).getBytes(StandardCharsets.UTF_8));
  }
}
