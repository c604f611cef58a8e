package ai.spboucher.spbgit.system.page;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.spboucher.spbgit.gateway.RunnerStandIn;
import ai.spboucher.spbgit.gateway.TestGateway;
import ai.spboucher.spbgit.proto.JobStatus;
import ai.spboucher.spbgit.proto.StatusChange;
import ai.spboucher.spbgit.testsupport.GitCli;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.openqa.selenium.By;

/**
 * The review loop on the proposal page, in a real Chromium: a comment and "Request changes" on a
 * job's page start its revision; a chain of three revisions is listed on each of its pages, a
 * revision's diff switches between its own changes and the whole chain's, and approving a revision
 * that is not the chain's latest fast-forwards the branch to it. Real gateway, NATS and git; the
 * test plays the runner: it reports each job's start and end and pushes its proposal with the job's
 * own token, each revision's commit on top of the work it revises.
 */
class RevisionPageIT {

  private static final Path DOC_IMAGES = Path.of("..", "docs", "images");

  @TempDir Path tmp;

  @Test
  void requestsChangesFromThePageAndReviewsAndApprovesAChainOfRevisions() throws Exception {
    try (PageBed bed = PageBed.start(tmp, new JsonObject())) {
      TestGateway gateway = bed.gateway;
      Browser browser = bed.browser;
      GitCli git = bed.stack.git();
      Path work = bed.stack.createRepo("demo", "demo");
      String base = git.ok(work, "rev-parse", "HEAD").output().strip();

      HttpResponse<String> created =
          gateway.api(
              "POST",
              "/api/v1/repos/demo/agent-jobs",
              gateway.ownerToken,
              new JsonObject().put("task", "Greet").put("exec", "echo hello > a.txt").encode());
      assertEquals(201, created.statusCode(), created.body());
      String first = new JsonObject(created.body()).getString("id");
      String proposal1 = runAs(bed, git, work, first, "a.txt");

      // Job 1's page: a summary comment, then "Request changes" with the owner's text.
      browser.open("/repos/demo/agent-jobs/" + first);
      browser.waitFor(d -> d.findElements(By.cssSelector("#diff section.file")).size() == 1);
      assertTrue(browser.byId("revisions").getAttribute("hidden") != null, "a lone job");
      browser.waitFor(d -> d.findElement(By.id("request-changes")).isDisplayed());
      browser.byId("request-changes").click();
      browser.waitFor(
          d -> browser.text("revise-comments-note").startsWith("No review comments") ? true : null);
      // A comment written while the form is open is counted, and sent, too.
      browser.byId("summary-text").sendKeys("Say goodbye too");
      browser.byId("summary-send").click();
      browser.waitFor(d -> d.findElements(By.cssSelector("#review-comments article")).size() == 1);
      browser.waitFor(
          d -> browser.text("revise-comments-note").startsWith("1 review comment") ? true : null);
      assertTrue(browser.byId("revise-exec").isDisplayed(), "an exec job needs a new command");
      browser.byId("revise-text").sendKeys("Also write b.txt");
      browser.byId("revise-exec").sendKeys("echo bye > b.txt");
      browser.byId("revise-send").click();
      String second =
          browser.waitFor(
              d -> {
                String url = d.getCurrentUrl();
                String id = url.substring(url.lastIndexOf('/') + 1);
                return url.contains("/repos/demo/agent-jobs/") && !id.equals(first) ? id : null;
              });
      JsonObject revision2 = job(gateway, second);
      assertEquals(first, revision2.getString("revises"));
      assertEquals(2, revision2.getInteger("revision"));
      assertEquals("echo bye > b.txt", revision2.getString("exec"));
      assertEquals(proposal1, revision2.getString("base_sha"), "it starts on job 1's proposal");
      long commentId =
          new JsonArray(
                  gateway
                      .api(
                          "GET",
                          "/api/v1/repos/demo/agent-jobs/" + first + "/comments",
                          gateway.ownerToken,
                          null)
                      .body())
              .getJsonObject(0)
              .getLong("id");
      assertEquals(
          new JsonObject()
              .put("text", "Also write b.txt")
              .put("comments", new JsonArray().add(commentId)),
          revision2.getJsonObject("review"));
      assertTrue(
          revision2.getString("task").contains("Say goodbye too")
              && revision2.getString("task").contains("Also write b.txt"),
          revision2.getString("task"));
      String proposal2 = runAs(bed, git, work, second, "b.txt");

      HttpResponse<String> revised =
          gateway.api(
              "POST",
              "/api/v1/repos/demo/agent-jobs/" + second + "/revise",
              gateway.ownerToken,
              new JsonObject().put("task", "And c.txt").put("exec", "echo c > c.txt").encode());
      assertEquals(201, revised.statusCode(), revised.body());
      String third = new JsonObject(revised.body()).getString("id");
      String proposal3 = runAs(bed, git, work, third, "c.txt");

      // Revision 3's page: the chain, and its diff by scope.
      browser.open("/repos/demo/agent-jobs/" + third);
      List<Map<String, Object>> listed =
          browser.waitFor(
              d -> {
                List<Map<String, Object>> rows = revisionRows(browser);
                return rows.size() == 3 && !rows.get(2).get("status").equals("") ? rows : null;
              });
      assertEquals(
          List.of(
              Map.of(
                  "revision",
                  "1",
                  "job",
                  first,
                  "href",
                  "/repos/demo/agent-jobs/" + first,
                  "current",
                  false,
                  "status",
                  "finished: ok",
                  "review",
                  "The first job."),
              Map.of(
                  "revision",
                  "2",
                  "job",
                  second,
                  "href",
                  "/repos/demo/agent-jobs/" + second,
                  "current",
                  false,
                  "status",
                  "finished: ok",
                  "review",
                  "Also write b.txt\nwith 1 review comment"),
              Map.of(
                  "revision",
                  "3",
                  "job",
                  third,
                  "href",
                  "/repos/demo/agent-jobs/" + third,
                  "current",
                  true,
                  "status",
                  "finished: ok",
                  "review",
                  "And c.txt")),
          listed);
      assertEquals("Greet · revision 3", browser.text("task"), "the first job's task heads it");
      browser.open("/repos/demo/agent-jobs");
      // One script: the list re-renders on every refresh.
      assertTrue(
          browser
              .waitFor(
                  d -> {
                    Object cells =
                        browser.js(
                            "return [...document.querySelectorAll('td.task')].map(c => c.textContent)");
                    return cells instanceof List<?> list && list.contains("Greet · revision 3")
                        ? list
                        : null;
                  })
              .contains("Greet · revision 2"),
          "the list names a revision by the first job's task and its number, not its whole task");
      browser.open("/repos/demo/agent-jobs/" + third);
      browser.waitFor(d -> "Greet · revision 3".equals(browser.text("task")) ? true : null);
      assertTrue(
          ((String) browser.js("return document.getElementById('task-full-text').textContent"))
              .endsWith("And c.txt\n</owner_review>"),
          "the whole task, both reviews in it, is one click away");
      assertTrue(browser.text("revises-link").startsWith("job " + second + "'s proposal"));
      assertEquals(
          List.of("a.txt", "b.txt", "c.txt"),
          browser.waitFor(d -> diffFiles(browser).size() == 3 ? diffFiles(browser) : null),
          "all revisions (the default): against the chain's original base");
      assertEquals("true", browser.byId("scope-cumulative").getAttribute("aria-pressed"));
      browser.byId("scope-revision").click();
      browser.waitFor(d -> diffFiles(browser).equals(List.of("c.txt")) ? true : null);
      assertTrue(
          browser
              .text("diff")
              .contains(proposal2.substring(0, 12) + " → " + proposal3.substring(0, 12)),
          "this revision: on top of revision 2's proposal");
      browser.byId("view-split").click();
      browser.waitFor(d -> d.findElements(By.cssSelector("#diff table.split")).size() == 1);
      browser.byId("view-unified").click();
      browser.byId("scope-cumulative").click();
      browser.waitFor(d -> diffFiles(browser).size() == 3 ? true : null);
      assertTrue(
          browser
              .text("diff")
              .contains(base.substring(0, 12) + " → " + proposal3.substring(0, 12)));
      browser.byId("scope-revision").click();
      browser.waitFor(d -> diffFiles(browser).equals(List.of("c.txt")) ? true : null);
      browser.js("window.scrollTo(0, 0)");
      Path shot = browser.fullPageScreenshot("revision-chain", 2500);
      Files.createDirectories(DOC_IMAGES);
      Files.copy(
          shot, DOC_IMAGES.resolve("revision-chain.png"), StandardCopyOption.REPLACE_EXISTING);

      // The server's refusal is shown as its text: a command over the gateway's limit.
      String tooLong = "x".repeat(20_001);
      String refusal =
          new JsonObject(
                  gateway
                      .api(
                          "POST",
                          "/api/v1/repos/demo/agent-jobs/" + third + "/revise",
                          gateway.ownerToken,
                          new JsonObject().put("exec", tooLong).encode())
                      .body())
              .getString("error");
      browser.byId("request-changes").click();
      browser.js("document.getElementById('revise-exec').value = arguments[0]", tooLong);
      browser.byId("revise-send").click();
      browser.waitFor(d -> d.findElement(By.id("revise-error")).isDisplayed());
      assertEquals("Request changes failed: " + refusal, browser.text("revise-error"));
      browser.byId("revise-cancel").click();

      // Revision 4 leaves only partial work, and its agent rewrote history: its commit sits on
      // revision 2's proposal, not on revision 3's. Both scopes apply to partial work; against
      // revision 3 the trees are compared, so the c.txt it dropped shows as deleted, and the page
      // says why.
      HttpResponse<String> fourth =
          gateway.api(
              "POST",
              "/api/v1/repos/demo/agent-jobs/" + third + "/revise",
              gateway.ownerToken,
              new JsonObject().put("exec", "echo d > d.txt").encode());
      assertEquals(201, fourth.statusCode(), fourth.body());
      String partialJob = new JsonObject(fourth.body()).getString("id");
      git.ok(work, "checkout", "-q", proposal2);
      runAs(bed, git, work, partialJob, "d.txt", "partial", "timeout");
      browser.open("/repos/demo/agent-jobs/" + partialJob);
      browser.waitFor(
          d -> diffFiles(browser).equals(List.of("a.txt", "b.txt", "d.txt")) ? true : null);
      assertEquals("Partial work", browser.text("diff-heading"));
      assertFalse(browser.byId("rewrite-note").isDisplayed(), "it descends from the chain's base");
      browser.byId("scope-revision").click();
      browser.waitFor(d -> diffFiles(browser).size() == 2 ? true : null);
      String fileList = browser.text("diff-files");
      assertTrue(fileList.contains("c.txt deleted") && fileList.contains("d.txt added"), fileList);
      assertEquals("Partial work", browser.text("diff-heading"));
      assertTrue(
          browser
              .text("rewrite-note")
              .startsWith(
                  "This work does not have " + proposal3.substring(0, 12) + " in its history"),
          browser.text("rewrite-note"));

      // Job 1 has a revision with work: it is revised no more from its page.
      browser.open("/repos/demo/agent-jobs/" + first);
      browser.waitFor(d -> revisionRows(browser).size() == 4 ? true : null);
      assertFalse(browser.byId("request-changes").isDisplayed());
      assertTrue(
          browser.byId("scope-tools").getAttribute("hidden") != null,
          "the first job has one scope");

      // Approve revision 2, not the latest: main fast-forwards to its proposal.
      browser.open("/repos/demo/agent-jobs/" + second);
      browser.waitFor(d -> d.findElement(By.id("approve")).isEnabled());
      browser.byId("approve").click();
      browser.byId("dialog-input").clear();
      browser.byId("dialog-input").sendKeys("main");
      browser.byId("dialog-confirm").click();
      browser.waitFor(d -> d.findElements(By.id("decision-badge")).size() == 1);
      assertEquals(
          proposal2,
          git.ok(gateway.repoDir("demo"), "rev-parse", "refs/heads/main").output().strip());
      assertEquals(
          "approved → main",
          browser.waitFor(
              d ->
                  (String)
                      browser.js(
                          "const li = document.querySelector('#revision-list li[data-revision=\"2\"]');"
                              + " const d = li && li.querySelector('.revision-decision');"
                              + " return d && d.innerText ? d.innerText : null")));
      assertTrue(browser.all("#revisions b, #revisions script").isEmpty());
      assertEquals(List.of(), browser.pageProblems(), "console errors or CSP refusals");
    }
  }

  /**
   * Plays the runner for job {@code id}: started, a commit adding {@code file} on top of the work
   * tree's HEAD (the previous proposal) pushed as the job's proposal with the job's token,
   * finished. Answers the proposal commit.
   */
  private static String runAs(PageBed bed, GitCli git, Path work, String id, String file)
      throws Exception {
    return runAs(bed, git, work, id, file, "proposal", "ok");
  }

  /** As above, pushing the work as {@code ref} and ending the job {@code exitReason}. */
  private static String runAs(
      PageBed bed, GitCli git, Path work, String id, String file, String ref, String exitReason)
      throws Exception {
    String token =
        RunnerStandIn.jobToken(
            bed.gateway, RunnerStandIn.queuedRequest(bed.runner, bed.gateway, id));
    RunnerStandIn.publishStarted(bed.runner, id, "");
    Files.writeString(work.resolve(file), file + "\n");
    git.ok(work, "add", file);
    git.ok(work, "commit", "-q", "-m", "Add " + file + "\n\nAgent-Job: " + id);
    String sha = git.ok(work, "rev-parse", "HEAD").output().strip();
    git.ok(
        work,
        "push",
        "-q",
        bed.gateway.pushUrl("demo", token),
        "HEAD:refs/agents/" + id + "/" + ref);
    RunnerStandIn.publishStatus(
        bed.runner,
        id,
        2,
        StatusChange.newBuilder()
            .setStatus(JobStatus.FINISHED)
            .setExitReason(exitReason)
            .setRunnerId("r1")
            .build());
    bed.gateway.awaitFinished("/api/v1/repos/demo/agent-jobs/" + id);
    return sha;
  }

  private static JsonObject job(TestGateway gateway, String id) throws Exception {
    return new JsonObject(
        gateway.api("GET", "/api/v1/repos/demo/agent-jobs/" + id, gateway.ownerToken, null).body());
  }

  /** The Revisions section's rows, read in one script: the page re-renders it on every refresh. */
  @SuppressWarnings("unchecked")
  private static List<Map<String, Object>> revisionRows(Browser browser) {
    return (List<Map<String, Object>>)
        browser.js(
            "return [...document.querySelectorAll('#revision-list > li')].map(li => ({"
                + " revision: li.dataset.revision, job: li.dataset.job,"
                + " href: li.querySelector('a').getAttribute('href'),"
                + " current: li.classList.contains('current'),"
                + " status: li.querySelector('.badge').innerText,"
                + " review: li.lastElementChild.innerText.trim() }))");
  }

  /** The paths of the files the diff shows, read in one script. */
  @SuppressWarnings("unchecked")
  private static List<String> diffFiles(Browser browser) {
    return (List<String>)
        browser.js(
            "return [...document.querySelectorAll('#diff section.file')].map(s => s.dataset.path)");
  }
}
