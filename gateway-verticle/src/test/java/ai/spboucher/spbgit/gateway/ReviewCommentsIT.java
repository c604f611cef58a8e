package ai.spboucher.spbgit.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.spboucher.spbgit.gateway.http.ApiRoutes;
import ai.spboucher.spbgit.proto.JobRequest;
import ai.spboucher.spbgit.testsupport.GitCli;
import ai.spboucher.spbgit.testsupport.Stack;
import io.nats.client.Connection;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Review comments on a job's proposal, end to end: a real gateway, NATS and git, a job whose
 * proposal is pushed with its own token as the runner's git relay does. Comments are checked
 * against the diff, audited as {@code review_comment}, survive a restart (the book is replayed from
 * the log), are marked outdated once the proposal moves, and every bad request gets a clear 4xx.
 */
class ReviewCommentsIT {

  private static final String REPO = "demo";

  @TempDir Path tmp;

  @Test
  void commentsOnTheDiffAreCheckedAuditedReplayedAndMarkedOutdatedWhenTheProposalMoves()
      throws Exception {
    try (Stack stack =
        Stack.builder(tmp).nats().gateway(new JsonObject().put("model", "gpt-test")).start()) {
      Connection runner = stack.natsConnection();
      GitCli git = stack.git();
      Path work = stack.createRepo(REPO, "work");
      String id;
      String proposal;
      String jobPath;
      {
        TestGateway gateway = stack.gateway(TestGateway.class);
        String base = git.ok(work, "rev-parse", "HEAD").output().strip();
        id = createJob(gateway);
        jobPath = "/api/v1/repos/" + REPO + "/agent-jobs/" + id;
        JobRequest request = RunnerStandIn.takeRequest(runner);
        assertEquals(id, request.getJobId());

        HttpResponse<String> early =
            comment(gateway, jobPath, new JsonObject().put("body", "too early"));
        assertError(409, "has no proposal or partial work to comment on", early);

        Files.writeString(work.resolve("README.md"), "hello work\nhello agent\n");
        git.ok(work, "commit", "-q", "-am", "Greet in the README\n\nAgent-Job: " + id);
        proposal = git.ok(work, "rev-parse", "HEAD").output().strip();
        git.ok(
            work,
            "push",
            "-q",
            gateway.pushUrl(REPO, RunnerStandIn.jobToken(gateway, request)),
            "HEAD:refs/agents/" + id + "/proposal");
        finish(runner, id);
        gateway.awaitFinished(jobPath);

        HttpResponse<String> summary =
            comment(
                gateway,
                jobPath,
                new JsonObject()
                    .put("body", "Looks close. <img src=x onerror=alert(1)> \u001b[31mred\u001b[0m")
                    .put("commit", proposal));
        assertEquals(201, summary.statusCode(), summary.body());
        JsonObject first = new JsonObject(summary.body());
        assertEquals(proposal, first.getString("commit"));
        assertEquals(null, first.getString("path"));
        HttpResponse<String> onAdded =
            comment(
                gateway,
                jobPath,
                new JsonObject()
                    .put("body", "Say hello to the owner too")
                    .put("path", "README.md")
                    .put("line", 2));
        assertEquals(201, onAdded.statusCode(), onAdded.body());
        assertEquals("new", new JsonObject(onAdded.body()).getString("side"));
        HttpResponse<String> onContext =
            comment(
                gateway,
                jobPath,
                new JsonObject()
                    .put("body", "Keep this line")
                    .put("path", "README.md")
                    .put("side", "old")
                    .put("line", 1));
        assertEquals(201, onContext.statusCode(), onContext.body());

        assertError(
            400,
            "the diff of 'README.md' shows no line 7 on its new side",
            comment(gateway, jobPath, onLine("README.md", "new", 7)));
        assertError(
            400,
            "the diff of 'README.md' shows no line 2 on its old side",
            comment(gateway, jobPath, onLine("README.md", "old", 2)));
        assertError(
            400, "has no file 'NOPE.md'", comment(gateway, jobPath, onLine("NOPE.md", "new", 1)));
        assertError(
            400,
            "needs both 'path' and 'line'",
            comment(gateway, jobPath, new JsonObject().put("body", "x").put("line", 1)));
        assertError(
            400,
            "'body' is required",
            comment(gateway, jobPath, new JsonObject().put("body", " ")));
        assertError(
            413,
            "at most 8192 are allowed",
            comment(gateway, jobPath, new JsonObject().put("body", "é".repeat(4097))));
        assertError(
            409,
            "reload it and comment on what it is now",
            comment(gateway, jobPath, new JsonObject().put("body", "x").put("commit", base)));
        assertError(
            404,
            "no job nope",
            comment(
                gateway,
                "/api/v1/repos/" + REPO + "/agent-jobs/nope",
                new JsonObject().put("body", "x")));

        // A job token is no owner, and a signed-in page must echo its CSRF token.
        HttpResponse<String> asJob =
            gateway.api(
                "POST",
                jobPath + "/comments",
                RunnerStandIn.jobToken(gateway, request),
                new JsonObject().put("body", "x").encode());
        assertEquals(403, asJob.statusCode(), asJob.body());
        Session session = signIn(gateway);
        assertEquals(403, bySession(gateway, jobPath, session, null).statusCode());
        HttpResponse<String> withCsrf = bySession(gateway, jobPath, session, session.csrf());
        assertEquals(201, withCsrf.statusCode(), withCsrf.body());

        List<JsonObject> audited =
            new JsonArray(
                    gateway
                        .api("GET", "/api/v1/agent-jobs?job=" + id, gateway.ownerToken, null)
                        .body())
                .stream()
                    .map(JsonObject.class::cast)
                    .filter(e -> "review_comment".equals(e.getString("event")))
                    .toList();
        assertEquals(4, audited.size(), audited.toString());
        JsonObject line = audited.get(1);
        assertEquals(proposal, line.getString("commit"));
        assertEquals("README.md", line.getString("path"));
        assertEquals("new", line.getString("side"));
        assertEquals(2, line.getInteger("line"));
        assertEquals("Say hello to the owner too", line.getString("body"));
        assertFalse(line.getString("author").isEmpty());
        assertEquals(new JsonObject(onAdded.body()).getLong("id"), line.getLong("seq"));
      }

      // A restart rebuilds the comments from the audit log alone.
      stack.stopGateway();
      {
        TestGateway gateway = (TestGateway) stack.startGateway();
        JsonArray listed = comments(gateway, jobPath);
        assertEquals(4, listed.size(), listed.encodePrettily());
        JsonObject first = listed.getJsonObject(0);
        assertEquals(
            "Looks close. <img src=x onerror=alert(1)> \u001b[31mred\u001b[0m",
            first.getString("body"));
        assertFalse(first.getBoolean("outdated"));
        assertEquals("README.md", listed.getJsonObject(1).getString("path"));

        // The owner moves the proposal on: the comments stay, marked as written on older work.
        Files.writeString(work.resolve("README.md"), "hello work\nhello agent\nhello owner\n");
        git.ok(work, "commit", "-q", "-am", "Greet the owner too");
        git.ok(
            work,
            "push",
            "-q",
            "-f",
            gateway.pushUrl(REPO, gateway.ownerToken),
            "HEAD:refs/agents/" + id + "/proposal");
        listed = comments(gateway, jobPath);
        assertEquals(4, listed.size());
        listed.forEach(c -> assertTrue(((JsonObject) c).getBoolean("outdated"), c.toString()));
        HttpResponse<String> onNewLine = comment(gateway, jobPath, onLine("README.md", "new", 3));
        assertEquals(201, onNewLine.statusCode(), onNewLine.body());
        assertFalse(comments(gateway, jobPath).getJsonObject(4).getBoolean("outdated"));
      }
    }
  }

  @Test
  void aJobTakesAtMostTwoHundredComments() throws Exception {
    try (Stack stack =
        Stack.builder(tmp).nats().gateway(new JsonObject().put("model", "gpt-test")).start()) {
      TestGateway gateway = stack.gateway(TestGateway.class);
      Connection runner = stack.natsConnection();
      GitCli git = stack.git();
      Path work = stack.createRepo(REPO, "work");
      String id = createJob(gateway);
      String jobPath = "/api/v1/repos/" + REPO + "/agent-jobs/" + id;
      JobRequest request = RunnerStandIn.takeRequest(runner);
      Files.writeString(work.resolve("README.md"), "hello agent\n");
      git.ok(work, "commit", "-q", "-am", "Greet\n\nAgent-Job: " + id);
      git.ok(
          work,
          "push",
          "-q",
          gateway.pushUrl(REPO, RunnerStandIn.jobToken(gateway, request)),
          "HEAD:refs/agents/" + id + "/proposal");
      for (int i = 0; i < 200; i++) {
        HttpResponse<String> r = comment(gateway, jobPath, new JsonObject().put("body", "n" + i));
        assertEquals(201, r.statusCode(), r.body());
      }
      assertError(
          409,
          "has 200 review comments, as many as allowed",
          comment(gateway, jobPath, new JsonObject().put("body", "one more")));
    }
  }

  private record Session(String cookie, String csrf) {}

  private static Session signIn(TestGateway gateway) throws Exception {
    HttpResponse<String> r =
        gateway.api(
            "POST", "/session", null, new JsonObject().put("token", gateway.ownerToken).encode());
    assertEquals(200, r.statusCode(), r.body());
    String cookie = r.headers().firstValue("Set-Cookie").orElseThrow().split(";", 2)[0];
    assertTrue(cookie.startsWith(ApiRoutes.SESSION_COOKIE + "="), cookie);
    return new Session(cookie, new JsonObject(r.body()).getString("csrf"));
  }

  private static HttpResponse<String> bySession(
      TestGateway gateway, String jobPath, Session session, String csrf) throws Exception {
    HttpRequest.Builder b =
        HttpRequest.newBuilder(URI.create(gateway.baseUrl + jobPath + "/comments"))
            .timeout(Duration.ofSeconds(30))
            .header("Cookie", session.cookie())
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString("{\"body\":\"from the page\"}"));
    if (csrf != null) {
      b.header(ApiRoutes.CSRF_HEADER, csrf);
    }
    return HttpClient.newHttpClient().send(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  private static JsonObject onLine(String path, String side, int line) {
    return new JsonObject()
        .put("body", "here")
        .put("path", path)
        .put("side", side)
        .put("line", line);
  }

  private static HttpResponse<String> comment(TestGateway gateway, String jobPath, JsonObject body)
      throws Exception {
    return gateway.api("POST", jobPath + "/comments", gateway.ownerToken, body.encode());
  }

  private static JsonArray comments(TestGateway gateway, String jobPath) throws Exception {
    HttpResponse<String> r = gateway.api("GET", jobPath + "/comments", gateway.ownerToken, null);
    assertEquals(200, r.statusCode(), r.body());
    return new JsonArray(r.body());
  }

  private static void assertError(int status, String message, HttpResponse<String> response) {
    assertEquals(status, response.statusCode(), response.body());
    String error = new JsonObject(response.body()).getString("error");
    assertTrue(error.contains(message), error);
  }

  private static String createJob(TestGateway gateway) throws Exception {
    return gateway
        .createJob(REPO, new JsonObject().put("task", "Greet in the README"))
        .getString("id");
  }

  private static void finish(Connection runner, String id) throws Exception {
    RunnerStandIn.publishStarted(runner, id, "c0ffee");
    RunnerStandIn.publishFinishedOk(runner, id, "c0ffee");
  }
}
