package ai.spboucher.spbgit.system.page;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.spboucher.spbgit.gateway.RunnerStandIn;
import ai.spboucher.spbgit.gateway.TestGateway;
import ai.spboucher.spbgit.testsupport.GitCli;
import io.nats.client.Connection;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.openqa.selenium.By;

/**
 * Review comments on the proposal page: comments holding markup and ANSI escapes are shown as text
 * (nothing runs, the escape's ESC is a visible ␛), line comments sit under their line, and the
 * owner adds both kinds from the page (the session's CSRF path). Real headless Chromium, gateway,
 * NATS and git; the test reports the job's start and end as a runner does.
 */
class ReviewCommentsPageIT {

  private static final String HOSTILE =
      "<img src=x onerror=window.__pwned=1> \u001b[31mred\u001b[0m </textarea><script>window.__pwned=2</script>";

  @TempDir static Path tmp;
  static PageBed bed;
  static TestGateway gateway;
  static Connection runner;
  static Browser browser;
  static GitCli git;

  @BeforeAll
  static void start() throws Exception {
    bed = PageBed.start(tmp, new JsonObject().put("model", "gpt-test"));
    gateway = bed.gateway;
    runner = bed.runner;
    browser = bed.browser;
    git = bed.stack.git();
    gateway.createRepo("demo");
  }

  @AfterAll
  static void stop() throws Exception {
    if (bed != null) {
      bed.close();
    }
  }

  @Test
  void showsHostileCommentsAsTextAndAddsLineAndSummaryCommentsFromThePage() throws Exception {
    Path work = git.workTree(tmp, "demo");
    git.ok(work, "push", "-q", gateway.pushUrl("demo", gateway.ownerToken), "main");
    HttpResponse<String> created =
        gateway.api(
            "POST",
            "/api/v1/repos/demo/agent-jobs",
            gateway.ownerToken,
            new JsonObject().put("task", "Greet").encode());
    assertEquals(201, created.statusCode(), created.body());
    String id = new JsonObject(created.body()).getString("id");
    String jobPath = "/api/v1/repos/demo/agent-jobs/" + id;
    Files.writeString(work.resolve("README.md"), "hello demo\nhello agent\n");
    git.ok(work, "commit", "-q", "-am", "Greet\n\nAgent-Job: " + id);
    String proposal = git.ok(work, "rev-parse", "HEAD").output().strip();
    git.ok(
        work,
        "push",
        "-q",
        gateway.pushUrl("demo", gateway.ownerToken),
        "HEAD:refs/agents/" + id + "/proposal");
    finish(id);
    post(jobPath, new JsonObject().put("body", HOSTILE));
    post(jobPath, new JsonObject().put("body", HOSTILE).put("path", "README.md").put("line", 2));

    browser.open("/repos/demo/agent-jobs/" + id);
    browser.waitFor(d -> d.findElements(By.cssSelector("article.comment")).size() == 2);
    String inert = HOSTILE.replace('\u001b', '\u241b');
    // Read through waitFor: the page re-renders the comments on each refresh, and a read of a
    // replaced element is asked again.
    assertEquals(
        List.of(inert, inert),
        browser.waitFor(
            d ->
                browser.all("article.comment .comment-body").stream()
                    .map(e -> e.getText())
                    .toList()));
    String first =
        browser.waitFor(d -> browser.all("#review-comments article.comment").get(0).getText());
    assertTrue(first.startsWith("Summary"), first);
    assertEquals(
        1,
        (int) browser.waitFor(d -> browser.all("#diff tr.comment-row article.comment").size()),
        "the line comment is under its line");
    assertEquals(
        "2",
        browser.js(
            "return document.querySelector('#diff tr.comment-row').previousElementSibling"
                + ".dataset.new"));
    assertTrue(
        browser.all("img, script:not([src]), b").isEmpty(),
        "comments (and their audit entries) are text");
    assertEquals(null, browser.js("return window.__pwned ?? null"));

    // A comment on the context line 1, from the page: its "+" opens a box under the line.
    browser.driver.findElement(By.cssSelector("#diff tr[data-new='1'] button.comment-add")).click();
    browser
        .waitFor(d -> d.findElement(By.cssSelector("#diff tr.comment-form textarea")))
        .sendKeys("Keep <b>this</b> line");
    browser.driver.findElement(By.cssSelector("#diff tr.comment-form button[type=submit]")).click();
    browser.waitFor(d -> d.findElements(By.cssSelector("#diff tr.comment-row")).size() == 2);
    assertTrue(browser.all("#diff tr.comment-form").isEmpty(), "the box closed");

    browser.byId("summary-text").sendKeys("Ship it after the fix");
    browser.byId("summary-send").click();
    browser.waitFor(d -> d.findElements(By.cssSelector("#review-comments article")).size() == 2);
    browser.screenshot("review-comments");

    JsonArray listed =
        new JsonArray(gateway.api("GET", jobPath + "/comments", gateway.ownerToken, null).body());
    assertEquals(4, listed.size(), listed.encodePrettily());
    JsonObject onLine = listed.getJsonObject(2);
    assertEquals("README.md", onLine.getString("path"));
    assertEquals("new", onLine.getString("side"));
    assertEquals(1, onLine.getInteger("line"));
    assertEquals(proposal, onLine.getString("commit"));
    assertEquals("Keep <b>this</b> line", onLine.getString("body"));
    assertEquals("Ship it after the fix", listed.getJsonObject(3).getString("body"));
    assertTrue(browser.all("#diff b, #review b").isEmpty());
    assertEquals(null, browser.js("return window.__pwned ?? null"));
    assertEquals(List.of(), browser.pageProblems(), "console errors or CSP refusals");
  }

  @Test
  void saysWhyACommentWasRefused() throws Exception {
    gateway.createRepo("big");
    Path work = git.workTree(tmp, "big");
    git.ok(work, "push", "-q", gateway.pushUrl("big", gateway.ownerToken), "main");
    HttpResponse<String> created =
        gateway.api(
            "POST",
            "/api/v1/repos/big/agent-jobs",
            gateway.ownerToken,
            new JsonObject().put("task", "Greet").encode());
    String id = new JsonObject(created.body()).getString("id");
    Files.writeString(work.resolve("README.md"), "hello agent\n");
    git.ok(work, "commit", "-q", "-am", "Greet\n\nAgent-Job: " + id);
    git.ok(
        work,
        "push",
        "-q",
        gateway.pushUrl("big", gateway.ownerToken),
        "HEAD:refs/agents/" + id + "/proposal");
    finish(id);
    browser.open("/repos/big/agent-jobs/" + id);
    browser.waitFor(d -> d.findElement(By.id("summary-form")).isDisplayed());
    browser.byId("summary-send").click();
    browser.waitFor(d -> d.findElement(By.id("comment-error")).isDisplayed());
    assertEquals(
        "Comment failed: 'body' is required and must be a non-empty string",
        browser.text("comment-error"));
    assertEquals(List.of(), browser.pageProblems(), "console errors or CSP refusals");
  }

  private static void post(String jobPath, JsonObject body) throws Exception {
    HttpResponse<String> r =
        gateway.api("POST", jobPath + "/comments", gateway.ownerToken, body.encode());
    assertEquals(201, r.statusCode(), r.body());
  }

  private static void finish(String id) throws Exception {
    RunnerStandIn.publishStarted(runner, id, "");
    RunnerStandIn.publishFinishedOk(runner, id, "");
  }
}
