package ai.spboucher.spbgit.runner;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.spboucher.spbgit.testsupport.LogFollower;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.WebSocket;
import java.net.http.WebSocketHandshakeException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Live logs over the websocket and the text log, with their gates; approval, rejection and ref
 * deletion.
 */
class LogStreamIT {

  @TempDir static Path tmp;
  static JobTestBed bed;
  static final HttpClient http = HttpClient.newHttpClient();

  @BeforeAll
  static void start() throws Exception {
    bed = JobTestBed.start(tmp, "60s");
    bed.startRunner("logs", Map.of());
    bed.createRepo("logs", Map.of("README.md", "hello\n"));
  }

  @AfterAll
  static void stop() throws Exception {
    bed.close();
  }

  @Test
  void aViewerSeesEveryLineOnceInOrderAcrossAReconnect() throws Exception {
    String id =
        bed.submit("logs", "for i in $(seq 1 400); do echo line-$i; sleep 0.01; done", null)
            .getString("id");
    bed.await("logs", id, "started", Duration.ofSeconds(60));
    LogFollower first =
        LogFollower.open(bed.gateway.baseUrl, bed.gateway.ownerToken, "logs", id, 0);
    List<JsonObject> seen = new ArrayList<>(first.take(3));
    first.socket().sendClose(WebSocket.NORMAL_CLOSURE, "bye").join();
    long last = seen.get(seen.size() - 1).getLong("seq");
    LogFollower second =
        LogFollower.open(bed.gateway.baseUrl, bed.gateway.ownerToken, "logs", id, last);
    JsonObject end = second.readUntilEnd(seen);
    assertEquals("ok", end.getString("exit_reason"));

    long expected = 1;
    StringBuilder text = new StringBuilder();
    for (JsonObject frame : seen) {
      assertEquals(expected++, frame.getLong("seq"), "no gap, no duplicate");
      text.append(frame.getString("data"));
    }
    List<String> lines = text.toString().lines().filter(l -> l.startsWith("line-")).toList();
    assertEquals(400, lines.size());
    for (int i = 0; i < 400; i++) {
      assertEquals("line-" + (i + 1), lines.get(i));
    }
    HttpResponse<String> whole =
        get("/api/v1/repos/logs/agent-jobs/" + id + "/log", bed.gateway.ownerToken);
    assertEquals(200, whole.statusCode());
    assertEquals(text.toString(), whole.body());
  }

  @Test
  void viewersJoiningAtDifferentTimesEachGetEveryLineOnceInOrder() throws Exception {
    String id =
        bed.submit("logs", "for i in $(seq 1 300); do echo many-$i; sleep 0.005; done", null)
            .getString("id");
    List<LogFollower> early = new ArrayList<>();
    for (int i = 0; i < 10; i++) {
      early.add(LogFollower.open(bed.gateway.baseUrl, bed.gateway.ownerToken, "logs", id, 0));
    }
    bed.await("logs", id, "started", Duration.ofSeconds(60));
    List<JsonObject> firstFrames = early.get(0).take(2);
    // Joins the job's shared feed part way, from where it stands; and one more that starts from
    // scratch.
    LogFollower resumed =
        LogFollower.open(
            bed.gateway.baseUrl,
            bed.gateway.ownerToken,
            "logs",
            id,
            firstFrames.get(1).getLong("seq"));
    LogFollower late = LogFollower.open(bed.gateway.baseUrl, bed.gateway.ownerToken, "logs", id, 0);
    List<JsonObject> resumedFrames = new ArrayList<>(firstFrames);
    assertEquals("ok", resumed.readUntilEnd(resumedFrames).getString("exit_reason"));
    assertEveryLineOnceInOrder(resumedFrames, "many-", 300);
    List<LogFollower> all = new ArrayList<>(early);
    all.add(late);
    for (LogFollower viewer : all) {
      List<JsonObject> frames = new ArrayList<>();
      if (viewer == early.get(0)) {
        frames.addAll(firstFrames);
      }
      assertEquals("ok", viewer.readUntilEnd(frames).getString("exit_reason"));
      assertEveryLineOnceInOrder(frames, "many-", 300);
    }
  }

  @Test
  void aViewerOfAJobCancelledBeforeItRanIsToldItEnded() throws Exception {
    String busy = bed.submit("logs", "sleep 8", null).getString("id");
    bed.await("logs", busy, "started", Duration.ofSeconds(60));
    String queued = bed.submit("logs", "echo never", null).getString("id");
    LogFollower viewer =
        LogFollower.open(bed.gateway.baseUrl, bed.gateway.ownerToken, "logs", queued, 0);
    assertEquals(
        202,
        post(
                "/api/v1/repos/logs/agent-jobs/" + queued + "/cancel",
                bed.gateway.ownerToken,
                new JsonObject())
            .statusCode());
    // The queue never reached a runner, so the stream holds no end: the gateway's own record ends
    // the viewer.
    JsonObject end = viewer.readUntilEnd(new ArrayList<>());
    assertEquals("cancelled", end.getString("exit_reason"));
    bed.awaitFinished("logs", busy);
  }

  /**
   * The log frames' text holds {@code prefix1} .. {@code prefixN} once each, in order, and no chunk
   * repeats.
   */
  private static void assertEveryLineOnceInOrder(
      List<JsonObject> frames, String prefix, int count) {
    StringBuilder text = new StringBuilder();
    long expected = frames.get(0).getLong("seq");
    for (JsonObject frame : frames) {
      assertEquals(expected++, frame.getLong("seq"), "no gap, no duplicate");
      text.append(frame.getString("data"));
    }
    List<String> lines = text.toString().lines().filter(l -> l.startsWith(prefix)).toList();
    assertEquals(count, lines.size());
    for (int i = 0; i < count; i++) {
      assertEquals(prefix + (i + 1), lines.get(i));
    }
  }

  @Test
  void replayIsCompleteAndInOrderAfterNatsAndGatewayRestarts() throws Exception {
    String id =
        bed.submit("logs", "for i in $(seq 1 300); do echo replay-$i; done", null).getString("id");
    bed.awaitFinished("logs", id);
    String before =
        get("/api/v1/repos/logs/agent-jobs/" + id + "/log", bed.gateway.ownerToken).body();
    assertEquals(300, before.lines().filter(l -> l.startsWith("replay-")).count());

    bed.nats.kill();
    bed.nats.restart();
    String afterNats = awaitLog(id);
    assertEquals(before, afterNats, "complete and in order after a nats-server restart");

    bed.restartGateway();
    assertEquals(before, awaitLog(id), "complete and in order on a restarted gateway");
    List<JsonObject> frames = new ArrayList<>();
    LogFollower.open(bed.gateway.baseUrl, bed.gateway.ownerToken, "logs", id, 0)
        .readUntilEnd(frames);
    assertEquals(before, frames.stream().map(f -> f.getString("data")).reduce("", String::concat));
  }

  /** The text log once the gateway's NATS connection is back. */
  private static String awaitLog(String id) throws Exception {
    long deadline = System.currentTimeMillis() + 30_000;
    HttpResponse<String> r = null;
    while (System.currentTimeMillis() < deadline) {
      r = get("/api/v1/repos/logs/agent-jobs/" + id + "/log", bed.gateway.ownerToken);
      if (r.statusCode() == 200 && !r.body().isEmpty()) {
        return r.body();
      }
      Thread.sleep(250);
    }
    throw new AssertionError(
        "no log after the restart: " + (r == null ? "" : r.statusCode() + " " + r.body()));
  }

  @Test
  void egressAttemptsAndModelCallsAreListedPerJob() throws Exception {
    String id =
        bed.submit("logs", "curl -s --max-time 5 http://127.0.0.1:9/ || true", null)
            .getString("id");
    bed.awaitFinished("logs", id);
    JsonArray egress = null;
    for (int i = 0; i < 40; i++) {
      egress =
          new JsonArray(
              get("/api/v1/repos/logs/agent-jobs/" + id + "/egress", bed.gateway.ownerToken)
                  .body());
      if (egress.size() >= 2) {
        break;
      }
      Thread.sleep(250);
    }
    List<JsonObject> attempts = egress.stream().map(JsonObject.class::cast).toList();
    assertTrue(
        attempts.stream().anyMatch(a -> a.getInteger("port") == 9 && !a.getBoolean("allowed")),
        "the refused attempt is recorded: " + egress.encodePrettily());
    assertTrue(
        attempts.stream().anyMatch(a -> a.getBoolean("allowed")),
        "the clone through the proxy: " + egress);
    assertEquals(
        new JsonArray(),
        new JsonArray(
            get("/api/v1/repos/logs/agent-jobs/" + id + "/model-calls", bed.gateway.ownerToken)
                .body()),
        "an exec job calls no model");
    String jobToken = bed.gateway.jobToken("logs", id, 60);
    assertEquals(
        403, get("/api/v1/repos/logs/agent-jobs/" + id + "/egress", jobToken).statusCode());
  }

  @Test
  void aFinishedJobReplaysAndEnds() throws Exception {
    String id = bed.submit("logs", "echo only-line", null).getString("id");
    bed.awaitFinished("logs", id);
    List<JsonObject> frames = new ArrayList<>();
    JsonObject end =
        LogFollower.open(bed.gateway.baseUrl, bed.gateway.ownerToken, "logs", id, 0)
            .readUntilEnd(frames);
    assertEquals("ok", end.getString("exit_reason"));
    assertTrue(frames.stream().anyMatch(f -> f.getString("data").contains("only-line")));
  }

  @Test
  void overLongLinesAreSplitAndNothingIsLost() throws Exception {
    String id =
        bed.submit("logs", "head -c 100000 /dev/zero | tr '\\0' x; echo; echo after", null)
            .getString("id");
    bed.awaitFinished("logs", id);
    String log = bed.log(id);
    long xs = log.lines().filter(l -> l.matches("x+")).mapToLong(String::length).sum();
    assertEquals(100_000, xs, "every byte is kept");
    assertTrue(
        log.lines().allMatch(l -> l.length() <= LogPump.MAX_LINE),
        "lines are split at the maximum");
    assertTrue(log.contains("after"));
  }

  @Test
  void websocketGatesRefuseForeignOriginsMissingAuthAndJobTokens() throws Exception {
    String id = bed.submit("logs", "true", null).getString("id");
    bed.awaitFinished("logs", id);
    assertEquals(403, handshakeStatus(id, bed.gateway.ownerToken, "https://evil.example"));
    assertEquals(401, handshakeStatus(id, null, bed.gateway.baseUrl));
    String jobToken = bed.gateway.jobToken("logs", id, 60);
    assertEquals(403, handshakeStatus(id, jobToken, bed.gateway.baseUrl));
    assertEquals(403, get("/api/v1/repos/logs/agent-jobs/" + id + "/log", jobToken).statusCode());
  }

  @Test
  void approveFastForwardsOnceAndRefusesStaleOrForeignRequests() throws Exception {
    String id = bed.submit("logs", "echo change > change.txt", null).getString("id");
    JsonObject done = bed.awaitFinished("logs", id);
    String jobPath = "/api/v1/repos/logs/agent-jobs/" + id;
    JsonObject job = new JsonObject(get(jobPath, bed.gateway.ownerToken).body());
    String sha = job.getString("proposal_sha");
    assertEquals(40, sha.length(), done.encode());
    String branch = "agent/" + id;

    assertEquals(
        409,
        post(
                jobPath + "/approve",
                bed.gateway.ownerToken,
                new JsonObject().put("branch", branch).put("sha", "0".repeat(40)))
            .statusCode());
    String jobToken = bed.gateway.jobToken("logs", id, 60);
    assertEquals(
        403,
        post(jobPath + "/approve", jobToken, new JsonObject().put("branch", branch).put("sha", sha))
            .statusCode());
    assertEquals(403, post(jobPath + "/reject", jobToken, new JsonObject()).statusCode());
    assertEquals(403, request("DELETE", jobPath + "/refs", jobToken, null).statusCode());

    Session session = Session.signIn(bed.gateway.baseUrl, bed.gateway.ownerToken);
    assertEquals(
        403,
        session
            .post(
                jobPath + "/approve", new JsonObject().put("branch", branch).put("sha", sha), false)
            .statusCode(),
        "a session needs its CSRF token");
    HttpResponse<String> approved =
        session.post(
            jobPath + "/approve", new JsonObject().put("branch", branch).put("sha", sha), true);
    assertEquals(200, approved.statusCode(), approved.body());
    assertTrue(
        bed.git.refs(bed.gateway.repoDir("logs")).contains("refs/heads/" + branch + " " + sha));
    assertEquals(
        200,
        post(
                jobPath + "/approve",
                bed.gateway.ownerToken,
                new JsonObject().put("branch", branch).put("sha", sha))
            .statusCode(),
        "approving twice is idempotent");
    assertEquals(
        1, audit(id).stream().filter(e -> "job_approved".equals(e.getString("event"))).count());
    assertEquals(
        409, post(jobPath + "/reject", bed.gateway.ownerToken, new JsonObject()).statusCode());
    assertEquals(
        409,
        post(
                jobPath + "/approve",
                bed.gateway.ownerToken,
                new JsonObject().put("branch", "main").put("sha", sha))
            .statusCode(),
        "already approved elsewhere");
  }

  @Test
  void nonFastForwardIsRefusedAndDeleteRemovesOnlyTheJobsRefs() throws Exception {
    String other = bed.submit("logs", "echo other > other.txt", null).getString("id");
    String id = bed.submit("logs", "echo mine > mine.txt", null).getString("id");
    bed.awaitFinished("logs", other);
    bed.awaitFinished("logs", id);
    String jobPath = "/api/v1/repos/logs/agent-jobs/" + id;
    String sha =
        new JsonObject(get(jobPath, bed.gateway.ownerToken).body()).getString("proposal_sha");
    String otherSha =
        new JsonObject(get("/api/v1/repos/logs/agent-jobs/" + other, bed.gateway.ownerToken).body())
            .getString("proposal_sha");
    // A branch already at the other job's proposal does not contain this one's parent chain.
    assertEquals(
        200,
        post(
                "/api/v1/repos/logs/agent-jobs/" + other + "/approve",
                bed.gateway.ownerToken,
                new JsonObject().put("branch", "shared").put("sha", otherSha))
            .statusCode());
    assertEquals(
        409,
        post(
                jobPath + "/approve",
                bed.gateway.ownerToken,
                new JsonObject().put("branch", "shared").put("sha", sha))
            .statusCode());

    HttpResponse<String> deleted =
        request("DELETE", jobPath + "/refs", bed.gateway.ownerToken, null);
    assertEquals(200, deleted.statusCode(), deleted.body());
    assertEquals(
        new JsonArray().add("refs/agents/" + id + "/proposal"),
        new JsonObject(deleted.body()).getJsonArray("deleted"));
    String refs = bed.git.refs(bed.gateway.repoDir("logs"));
    assertFalse(refs.contains("refs/agents/" + id + "/"));
    assertTrue(refs.contains("refs/agents/" + other + "/proposal"));
    assertTrue(audit(id).stream().anyMatch(e -> "refs_deleted".equals(e.getString("event"))));
    assertEquals(
        200, post(jobPath + "/reject", bed.gateway.ownerToken, new JsonObject()).statusCode());
  }

  private static List<JsonObject> audit(String id) throws Exception {
    return new JsonArray(get("/api/v1/agent-jobs?job=" + id, bed.gateway.ownerToken).body())
        .stream().map(JsonObject.class::cast).toList();
  }

  private static int handshakeStatus(String id, String token, String origin) {
    try {
      WebSocket.Builder b = http.newWebSocketBuilder().header("Origin", origin);
      if (token != null) {
        b.header("Authorization", "Bearer " + token);
      }
      b.buildAsync(
              URI.create(
                  bed.gateway.baseUrl.replace("http", "ws")
                      + "/api/v1/repos/logs/agent-jobs/"
                      + id
                      + "/logs"),
              new WebSocket.Listener() {})
          .join()
          .abort();
      return 101;
    } catch (CompletionException e) {
      if (e.getCause() instanceof WebSocketHandshakeException h) {
        return h.getResponse().statusCode();
      }
      throw e;
    }
  }

  static HttpResponse<String> get(String path, String token) throws Exception {
    return request("GET", path, token, null);
  }

  static HttpResponse<String> post(String path, String token, JsonObject body) throws Exception {
    return request("POST", path, token, body);
  }

  static HttpResponse<String> request(String method, String path, String token, JsonObject body)
      throws Exception {
    HttpRequest.Builder b =
        HttpRequest.newBuilder(URI.create(bed.gateway.baseUrl + path))
            .method(
                method,
                body == null
                    ? HttpRequest.BodyPublishers.noBody()
                    : HttpRequest.BodyPublishers.ofString(body.encode()));
    if (token != null) {
      b.header("Authorization", "Bearer " + token);
    }
    return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  /** A signed-in browser, as far as the server can tell: a session cookie and its CSRF token. */
  record Session(String baseUrl, String cookie, String csrf) {
    static Session signIn(String baseUrl, String pat) throws Exception {
      HttpResponse<String> r =
          http.send(
              HttpRequest.newBuilder(URI.create(baseUrl + "/session"))
                  .POST(
                      HttpRequest.BodyPublishers.ofString(
                          new JsonObject().put("token", pat).encode()))
                  .build(),
              HttpResponse.BodyHandlers.ofString());
      assertEquals(200, r.statusCode(), r.body());
      String setCookie = r.headers().firstValue("Set-Cookie").orElseThrow();
      assertTrue(
          setCookie.toLowerCase().contains("httponly") && setCookie.contains("SameSite=Strict"),
          setCookie);
      return new Session(
          baseUrl, setCookie.split(";")[0], new JsonObject(r.body()).getString("csrf"));
    }

    HttpResponse<String> post(String path, JsonObject body, boolean withCsrf) throws Exception {
      HttpRequest.Builder b =
          HttpRequest.newBuilder(URI.create(baseUrl + path))
              .header("Cookie", cookie)
              .POST(HttpRequest.BodyPublishers.ofString(body.encode()));
      if (withCsrf) {
        b.header("X-CSRF-Token", csrf);
      }
      return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }
  }
}
