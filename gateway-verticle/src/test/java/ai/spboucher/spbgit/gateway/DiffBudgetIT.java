package ai.spboucher.spbgit.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.spboucher.spbgit.testsupport.GitCli;
import ai.spboucher.spbgit.testsupport.Stack;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
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
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A proposal whose diff is quadratic to compute (a 100,000-line file of single letters, rearranged)
 * is answered within the diff budget with a clear "too large" answer, computed once per commit
 * however often and however concurrently it is viewed, and its computation stops when the only
 * client waiting for it goes away. The gateway, NATS and git are real; the proposal is pushed with
 * the job's own token, as the runner's relay does.
 */
class DiffBudgetIT {

  private static final String REPO = "demo";
  private static final int LINES = 100_000;

  /**
   * Well above the default 3 s budget, far below the ~40 s the unbounded diff took on the test
   * machine.
   */
  private static final Duration ANSWER_BOUND = Duration.ofSeconds(15);

  @TempDir Path tmp;

  @Test
  void aQuadraticDiffIsAnsweredTooLargeWithinItsBudgetAndComputedOncePerCommit() throws Exception {
    try (Stack stack =
        Stack.builder(tmp).nats().gateway(new JsonObject().put("model", "gpt-test")).start()) {
      TestGateway gateway = stack.gateway(TestGateway.class);
      String jobPath = jobWithQuadraticProposal(stack);
      HttpClient http = HttpClient.newHttpClient();
      HttpRequest view =
          HttpRequest.newBuilder(URI.create(gateway.baseUrl + jobPath + "/diff"))
              .header("Authorization", "Bearer " + gateway.ownerToken)
              .timeout(ANSWER_BOUND)
              .build();

      // Two reviewers open the page at once: one computation serves both.
      CompletableFuture<HttpResponse<String>> first =
          http.sendAsync(view, HttpResponse.BodyHandlers.ofString());
      CompletableFuture<HttpResponse<String>> second =
          http.sendAsync(view, HttpResponse.BodyHandlers.ofString());
      HttpResponse<String> response = first.get();
      assertEquals(200, response.statusCode(), response.body());
      assertEquals(
          response.body(), second.get().body(), "both concurrent views got the same answer");
      JsonObject diff = new JsonObject(response.body());
      String ref = diff.getString("ref");
      assertTrue(diff.getBoolean("too_large"), "the diff ran out of its time budget");
      assertTrue(diff.getBoolean("truncated"), "an answer that does not show everything says so");
      assertTrue(
          diff.getString("reason").startsWith("too large to show here: fetch " + ref),
          diff.getString("reason"));
      JsonArray files = diff.getJsonArray("files");
      assertEquals(1, files.size(), "the file is still listed");
      JsonObject letters = files.getJsonObject(0);
      assertEquals("letters.txt", letters.getString("path"));
      assertTrue(letters.getBoolean("too_large"));
      assertEquals(0, letters.getJsonArray("hunks").size());

      HttpResponse<String> again = http.send(view, HttpResponse.BodyHandlers.ofString());
      assertEquals(response.body(), again.body());
      Map<String, Double> metrics = gateway.metrics();
      assertEquals(
          1.0,
          metrics.get("spb_diff_computations_total{outcome=\"too_large\"}"),
          metrics.toString());
      assertEquals(
          0.0,
          metrics.get("spb_diff_computations_total{outcome=\"complete\"}"),
          metrics.toString());
      assertTrue(
          metrics.get("spb_diff_cache_hits_total") >= 1.0, "the third view came from the cache");
    }
  }

  @Test
  void aDiffStopsWhenItsOnlyClientGoesAway() throws Exception {
    try (Stack stack =
        Stack.builder(tmp)
            .nats()
            .gateway(new JsonObject().put("model", "gpt-test").put("diffTimeBudget", "10m"))
            .start()) {
      TestGateway gateway = stack.gateway(TestGateway.class);
      String jobPath = jobWithQuadraticProposal(stack);
      try (Socket client = new Socket("127.0.0.1", gateway.verticle.actualPort())) {
        OutputStream out = client.getOutputStream();
        out.write(
            ("GET "
                    + jobPath
                    + "/diff HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer "
                    + gateway.ownerToken
                    + "\r\n\r\n")
                .getBytes(StandardCharsets.US_ASCII));
        out.flush();
        awaitMetric(gateway, "spb_diff_computations_running", 1.0);
      }
      // With ten minutes of budget, only the client's going away can end the computation this soon.
      awaitMetric(gateway, "spb_diff_computations_total{outcome=\"cancelled\"}", 1.0);
      awaitMetric(gateway, "spb_diff_computations_running", 0.0);
      Map<String, Double> metrics = gateway.metrics();
      assertEquals(
          0.0,
          metrics.get("spb_diff_computations_total{outcome=\"complete\"}"),
          metrics.toString());
      assertEquals(
          0.0,
          metrics.get("spb_diff_computations_total{outcome=\"too_large\"}"),
          metrics.toString());
    }
  }

  /**
   * A job whose proposal rewrites a 100,000-line file of alternating {@code a}/{@code b} lines into
   * pairs: few distinct lines and a long edit script, the worst case of Myers' O(ND) diff that
   * histogram diff falls back to.
   */
  private static String jobWithQuadraticProposal(Stack stack) throws Exception {
    TestGateway gateway = stack.gateway(TestGateway.class);
    GitCli git = stack.git();
    Path work = stack.createRepo(REPO, "work");
    Files.writeString(work.resolve("letters.txt"), letters(List.of("a", "b")));
    git.ok(work, "add", "letters.txt");
    git.ok(work, "commit", "-q", "-m", "Alternating letters");
    git.ok(work, "push", "-q", gateway.pushUrl(REPO, gateway.ownerToken), "main");
    String id =
        gateway.createJob(REPO, new JsonObject().put("task", "Pair the letters")).getString("id");
    Files.writeString(work.resolve("letters.txt"), letters(List.of("a", "a", "b", "b")));
    git.ok(work, "commit", "-q", "-am", "Pair the letters\n\nAgent-Job: " + id);
    git.ok(
        work,
        "push",
        "-q",
        gateway.pushUrl(REPO, gateway.jobToken(REPO, id, 600)),
        "HEAD:refs/agents/" + id + "/proposal");
    return "/api/v1/repos/" + REPO + "/agent-jobs/" + id;
  }

  private static String letters(List<String> pattern) {
    StringBuilder text = new StringBuilder(LINES * 2);
    for (int i = 0; i < LINES; i++) {
      text.append(pattern.get(i % pattern.size())).append('\n');
    }
    return text.toString();
  }

  private static void awaitMetric(TestGateway gateway, String series, double value)
      throws Exception {
    long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
    Double seen = gateway.metrics().get(series);
    while ((seen == null || seen != value) && System.nanoTime() < deadline) {
      Thread.sleep(50);
      seen = gateway.metrics().get(series);
    }
    assertEquals(value, seen, series);
  }
}
