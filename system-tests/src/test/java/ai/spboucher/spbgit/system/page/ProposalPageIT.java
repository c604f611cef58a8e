package ai.spboucher.spbgit.system.page;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.spboucher.spbgit.runner.JobTestBed;
import ai.spboucher.spbgit.runner.LlmBed;
import io.vertx.core.json.JsonObject;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.openqa.selenium.By;
import org.openqa.selenium.WebElement;

/**
 * The proposal page in a real headless Chromium against a real gateway, NATS and runner: the live
 * log (order, reconnect without gap or duplicate, hostile output), the owner's approve, reject,
 * cancel and delete, and the partial work of an llm job stopped by its budget (the real agent
 * against a fake model provider), shown read-only with its model calls and network attempts.
 */
class ProposalPageIT {

  private static final String REPO = "demo";
  private static final String MODEL = "gpt-test";
  private static final String KEY = "sk-proposal-page-it-5b4a39281706";
  private static final Path DOC_IMAGES = Path.of("..", "docs", "images");

  // The agent's JVM needs the memory; exec jobs do not mind it. Llm jobs over 1000 tokens end
  // budget_exceeded.
  @RegisterExtension
  static final LlmBed llm =
      LlmBed.withKey(KEY)
          .wallLimit("90s")
          .gateway(new JsonObject().put("model", MODEL))
          .runner("r1", MODEL, LlmBed.BUDGETED)
          .repo(REPO, Map.of("README.md", "# Demo\n\nhello\n"));

  static Browser browser;

  @BeforeAll
  static void start() throws Exception {
    Browser.requireChromium();
    browser = Browser.start(llm.tmp.resolve("chromium"), llm.bed.gateway.baseUrl);
    browser.signIn(llm.bed.gateway.ownerToken, "/agent-jobs");
  }

  @AfterEach
  void pageRanCleanly() {
    assertEquals(List.of(), browser.pageProblems(), "console errors or CSP refusals");
  }

  @AfterAll
  static void stop() throws Exception {
    if (browser != null) {
      browser.close();
    }
  }

  @Test
  void showsEveryLineInOrderWhileTheJobRuns() throws Exception {
    String exec =
        String.join(
            "\n",
            "printf '\\033[1;34m==>\\033[0m writing a greeting\\n'",
            "for i in $(seq 1 300); do echo line-$i; sleep 0.02; done",
            "printf 'Hello from the agent\\n' > greeting.txt",
            "printf '# Demo\\n\\nhello, world\\n' > README.md",
            "printf '\\033[32mdone\\033[0m: wrote greeting.txt and README.md\\n'");
    String id =
        submit("Write a greeting and update the README", exec, "grep -q Hello greeting.txt");
    openJob(id);

    browser.waitFor(d -> numberedLines().size() >= 100 ? true : null);
    assertEquals("started", jobStatus(id), "the job is still running while lines arrive");
    List<Integer> partial = numberedLines();
    assertEquals(
        IntStream.rangeClosed(1, partial.size()).boxed().toList(),
        partial,
        "in order, none missing");
    browser.screenshot("proposal-running");

    browser.byId("log-pause").click();
    assertEquals("true", browser.byId("log-pause").getAttribute("aria-pressed"));
    long pausedAt =
        ((Number) browser.js("return document.getElementById('log').scrollTop")).longValue();
    int shownWhenPaused = numberedLines().size();
    browser.waitFor(d -> numberedLines().size() >= shownWhenPaused + 30 ? true : null);
    assertEquals(
        pausedAt,
        ((Number) browser.js("return document.getElementById('log').scrollTop")).longValue(),
        "a paused log keeps its place while lines arrive");
    browser.byId("log-pause").click();
    assertEquals(
        Boolean.TRUE,
        browser.js(
            "const log = document.getElementById('log');"
                + " return log.scrollHeight - log.scrollTop - log.clientHeight < 2"),
        "following the tail again");

    awaitLogEnd();
    assertEquals(IntStream.rangeClosed(1, 300).boxed().toList(), numberedLines());
    WebElement arrow = browser.driver.findElement(By.cssSelector("#log span.ansi-blue-fg"));
    assertEquals("==>", arrow.getText());
    assertEquals(
        "700",
        browser.js("return getComputedStyle(arguments[0]).fontWeight", arrow).toString(),
        "bold comes through CSSOM under the page's CSP");
    browser.waitFor(
        d -> d.findElement(By.id("test-result")).getText().contains("tests passed") ? true : null);
    browser.waitFor(
        d -> d.findElements(By.cssSelector("#diff section.file")).size() == 2 ? true : null);
    String files = browser.byId("diff-files").getText();
    assertTrue(files.contains("greeting.txt") && files.contains("README.md"), files);
    browser.byId("view-split").click();
    browser.waitFor(
        d -> d.findElements(By.cssSelector("#diff table.split")).size() == 2 ? true : null);
    browser.byId("view-unified").click();
    assertTrue(
        auditEvents()
            .containsAll(List.of("job_created", "job_started", "refs_written", "job_finished")));
    assertTrue(
        egressVias().contains("git_relay"),
        "the clone and the push through the git relay: " + egressVias());
    assertEquals("None.", browser.byId("model-calls").getText(), "an exec job calls no model");
    Path finished = browser.fullPageScreenshot("proposal-finished", 3200);
    Files.createDirectories(DOC_IMAGES);
    Files.copy(
        finished, DOC_IMAGES.resolve("proposal-finished.png"), StandardCopyOption.REPLACE_EXISTING);
    Files.copy(
        Browser.SCREENSHOTS.resolve("proposal-running.png"),
        DOC_IMAGES.resolve("proposal-running.png"),
        StandardCopyOption.REPLACE_EXISTING);
  }

  @Test
  void reconnectsAfterTheSocketDropsWithoutGapOrDuplicate() throws Exception {
    String id =
        submit("Count slowly", "for i in $(seq 1 300); do echo line-$i; sleep 0.03; done", null);
    openJob(id);
    for (int threshold : List.of(60, 180)) {
      browser.waitFor(d -> numberedLines().size() >= threshold ? true : null);
      Object closedAt =
          browser.js(
              "const s = window.__spbTestSocket; s.close(); return document.getElementById('log').dataset.lastSeq;");
      // The page notices, waits its backoff, reconnects with after=<last seq> and carries on.
      browser.waitFor(
          d ->
              browser
                      .js(
                          "return window.__spbTestSocket.readyState === WebSocket.OPEN"
                              + " || document.getElementById('log').dataset.ended === 'true'")
                      .equals(true)
                  ? true
                  : null);
      assertTrue(Long.parseLong(closedAt.toString()) > 0);
    }
    awaitLogEnd();
    assertEquals(
        IntStream.rangeClosed(1, 300).boxed().toList(), numberedLines(), "every line exactly once");
    long connections =
        Long.parseLong(
            browser.js("return document.getElementById('log').dataset.connects").toString());
    assertTrue(
        connections >= 3, "the page reconnected after each drop: " + connections + " connections");
  }

  @Test
  void hostileLogOutputIsShownAsTextAndNeverRuns() throws Exception {
    String exec =
        String.join(
            "\n",
            "echo '<script>window.__pwned=1</script>'",
            "echo '<img src=x onerror=window.__pwned=1>'",
            "echo '</textarea>'",
            "printf '\\033]8;;javascript:window.__pwned=1\\033\\\\click\\033]8;;\\033\\\\\\n'",
            "u=$(printf '\\033[1;31mX\\033[0m'); yes \"$u\" | head -n 440000 | tr -d '\\n'; echo",
            "echo after-the-flood");
    String id = submit("Print hostile output", exec, null);
    openJob(id);

    List<Long> roundTrips = new ArrayList<>();
    long deadline = System.nanoTime() + Duration.ofSeconds(120).toNanos();
    while (!logEnded() && System.nanoTime() < deadline) {
      long started = System.nanoTime();
      browser.js("return document.querySelectorAll('#log .ln').length");
      roundTrips.add((System.nanoTime() - started) / 1_000_000);
      Thread.sleep(200);
    }
    awaitLogEnd();
    System.out.printf(
        "hostile log: %d ms to render over %s websocket connection(s)%n",
        roundTrips.size() * 200L,
        browser.js("return document.getElementById('log').dataset.connects"));
    long slowest = roundTrips.stream().mapToLong(Long::longValue).max().orElse(0);
    assertTrue(
        slowest < 3000,
        "a script round trip took " + slowest + " ms while the log rendered: " + roundTrips);

    List<String> lines = logLines();
    assertTrue(lines.contains("<script>window.__pwned=1</script>"), lines.toString());
    assertTrue(lines.contains("<img src=x onerror=window.__pwned=1>"), lines.toString());
    assertTrue(lines.contains("</textarea>"), lines.toString());
    assertTrue(lines.contains("click"), "the OSC 8 link is shown as its text: " + lines);
    assertTrue(lines.contains("after-the-flood"), "lines after the 5 MB line are shown");
    String flood = lines.stream().filter(l -> l.startsWith("XXXX")).findFirst().orElseThrow();
    assertTrue(
        flood.length() < 20_000 && flood.contains("line cut here"),
        "the 5 MB line is cut: " + flood.substring(Math.max(0, flood.length() - 200)));
    assertNull(browser.js("return window.__pwned"));
    assertEquals(
        0L, browser.js("return document.querySelectorAll('a[href^=\"javascript\" i]').length"));
    assertEquals(
        0L,
        browser.js(
            "return document.querySelectorAll('#log a, #log img, #log script, #log textarea').length"));
    long responsive = System.nanoTime();
    assertEquals(2L, browser.js("return 1 + 1"));
    assertTrue(System.nanoTime() - responsive < Duration.ofSeconds(3).toNanos());
  }

  @Test
  void approveFastForwardsTheNamedBranchToTheReviewedProposal() throws Exception {
    String id = submit("Add approved.txt", "echo approved > approved.txt", null);
    openJob(id);
    WebElement approve =
        browser.waitFor(
            d -> {
              WebElement b = d.findElement(By.id("approve"));
              return b.isEnabled() ? b : null;
            });
    String shown = browser.byId("proposal-sha").getText();
    assertEquals(llm.bed.job(REPO, id).getString("proposal_sha"), shown);
    approve.click();
    WebElement branch =
        browser.waitFor(
            d ->
                d.findElement(By.id("dialog-input")).isDisplayed()
                    ? d.findElement(By.id("dialog-input"))
                    : null);
    assertEquals("agent/" + id, branch.getAttribute("value"));
    browser.byId("dialog-confirm").click();

    browser.waitFor(d -> d.findElements(By.id("decision-badge")).size() == 1 ? true : null);
    assertTrue(browser.byId("decision-badge").getText().startsWith("approved"));
    assertTrue(browser.byId("action-message").getText().contains("agent/" + id));
    assertEquals(
        shown,
        llm.bed
            .git
            .ok(llm.bed.gateway.repoDir(REPO), "rev-parse", "refs/heads/agent/" + id)
            .output()
            .strip());
    assertFalse(browser.byId("approve").isEnabled(), "approved once");
    assertTrue(auditEvents().contains("job_approved"));
  }

  @Test
  void approveSendsTheShaOnThePageAndRefusesAProposalThatMovedSince() throws Exception {
    String id = submit("Add reviewed.txt", "echo reviewed > reviewed.txt", null);
    openJob(id);
    browser.waitFor(d -> d.findElement(By.id("approve")).isEnabled() ? true : null);
    String shown = browser.byId("proposal-sha").getText();
    // The owner asks to approve what the page shows; the confirmation dialog is open when the ref
    // moves.
    browser.byId("approve").click();
    browser.waitFor(d -> d.findElement(By.id("dialog-confirm")).isDisplayed() ? true : null);

    // The proposal ref moves after the owner looked at it (the owner's token may push any ref).
    Path work = llm.tmp.resolve("moved-" + id);
    llm.bed.git.ok(llm.tmp, "clone", "-q", llm.bed.gateway.repoUrl(REPO), work.toString());
    llm.bed.git.ok(work, "fetch", "-q", "origin", "refs/agents/" + id + "/proposal");
    llm.bed.git.ok(work, "checkout", "-q", "FETCH_HEAD");
    Files.writeString(work.resolve("later.txt"), "not what was reviewed\n");
    llm.bed.git.ok(work, "add", ".");
    llm.bed.git.ok(work, "commit", "-q", "-m", "later");
    llm.bed.git.ok(
        work,
        "push",
        "-q",
        llm.bed.gateway.pushUrl(REPO, llm.bed.gateway.ownerToken),
        "HEAD:refs/agents/" + id + "/proposal");
    String moved = llm.bed.git.ok(work, "rev-parse", "HEAD").output().strip();

    browser.byId("dialog-confirm").click();
    WebElement error =
        browser.waitFor(
            d ->
                d.findElement(By.id("action-error")).isDisplayed()
                    ? d.findElement(By.id("action-error"))
                    : null);
    assertTrue(
        error.getText().startsWith("Approve failed:") && error.getText().contains(shown),
        error.getText());
    assertFalse(
        llm.bed
            .git
            .run(
                llm.bed.gateway.repoDir(REPO),
                "rev-parse",
                "--verify",
                "-q",
                "refs/heads/agent/" + id)
            .ok(),
        "no branch was created");
    browser.waitFor(
        d -> d.findElement(By.id("proposal-sha")).getText().equals(moved) ? true : null);
    // The sha is shown first, the new diff once it has loaded.
    browser.waitFor(
        d -> d.findElement(By.id("diff-files")).getText().contains("later.txt") ? true : null);
    assertTrue(
        browser.byId("diff-files").getText().contains("later.txt"),
        "the diff follows the new proposal");
  }

  @Test
  void rejectRecordsTheDecisionOnThePage() throws Exception {
    String id = submit("Add rejected.txt", "echo no > rejected.txt", null);
    openJob(id);
    browser.waitFor(d -> d.findElement(By.id("reject")).isEnabled() ? true : null);
    browser.byId("reject").click();
    browser.waitFor(d -> d.findElement(By.id("dialog-confirm")).isDisplayed() ? true : null);
    browser.byId("dialog-confirm").click();

    browser.waitFor(d -> d.findElements(By.id("decision-badge")).size() == 1 ? true : null);
    assertEquals("rejected", browser.byId("decision-badge").getText());
    assertFalse(browser.byId("approve").isEnabled());
    assertFalse(browser.byId("reject").isEnabled());
    assertEquals("rejected", llm.bed.job(REPO, id).getJsonObject("decision").getString("decision"));
    browser.waitFor(d -> auditEvents().contains("job_rejected") ? true : null);
  }

  @Test
  void cancelStopsARunningJobAndThePageShowsIt() throws Exception {
    String id = submit("Wait for a long time", "echo waiting; sleep 80", null);
    openJob(id);
    browser.waitFor(d -> logLines().contains("waiting") ? true : null);
    WebElement cancel = browser.byId("cancel");
    assertTrue(cancel.isDisplayed());
    cancel.click();
    browser.waitFor(d -> d.findElement(By.id("dialog-confirm")).isDisplayed() ? true : null);
    browser.byId("dialog-confirm").click();

    browser.waitFor(
        d -> d.findElement(By.id("status")).getText().equals("finished: cancelled") ? true : null);
    assertFalse(browser.byId("cancel").isDisplayed(), "no cancel once finished");
    awaitLogEnd();
    assertEquals("cancelled", llm.bed.job(REPO, id).getString("exit_reason"));
  }

  @Test
  void deleteNamesTheJobRefsAndRemovesOnlyThem() throws Exception {
    String other = submit("Another proposal", "echo other > other.txt", null);
    llm.bed.awaitFinished(REPO, other);
    String id = submit("A proposal to delete", "echo gone > gone.txt", null);
    openJob(id);
    browser.waitFor(d -> d.findElement(By.id("delete-refs")).isEnabled() ? true : null);
    String mainBefore = rev("refs/heads/main");

    browser.byId("delete-refs").click();
    browser.waitFor(d -> d.findElement(By.id("dialog-confirm")).isDisplayed() ? true : null);
    assertEquals(
        List.of("refs/agents/" + id + "/proposal"),
        browser.all("#dialog-items li").stream().map(WebElement::getText).toList());
    browser.byId("dialog-cancel").click();
    browser.waitFor(d -> d.findElement(By.id("confirm-dialog")).isDisplayed() ? null : true);
    assertTrue(
        refs().contains("refs/agents/" + id + "/proposal"),
        "cancelling the dialog deletes nothing");

    browser.byId("delete-refs").click();
    browser.waitFor(d -> d.findElement(By.id("dialog-confirm")).isDisplayed() ? true : null);
    browser.byId("dialog-confirm").click();
    browser.waitFor(
        d ->
            d.findElement(By.id("action-message"))
                    .getText()
                    .contains("Deleted refs/agents/" + id + "/proposal")
                ? true
                : null);

    String refs = refs();
    assertFalse(refs.contains("refs/agents/" + id + "/"), refs);
    assertTrue(refs.contains("refs/agents/" + other + "/proposal"), refs);
    assertEquals(mainBefore, rev("refs/heads/main"));
    browser.waitFor(d -> d.findElement(By.id("delete-refs")).isEnabled() ? null : true);
    browser.waitFor(
        d -> d.findElement(By.id("diff")).getText().contains("no proposal") ? true : null);
  }

  @Test
  void partialWorkOfAJobStoppedByItsBudgetIsShownReadOnlyWithItsModelCallsAndNetworkAttempts()
      throws Exception {
    JobTestBed.requireLlmAgent(JobTestBed.IMAGE);
    // 500 tokens a call: the second spends the budget of 1000, the agent is told, and pushes what
    // it has.
    llm.fake.then(
        llm.fake.openAiToolCall(
            "replace_in_file",
            "{\"path\":\"README.md\",\"old\":\"hello\",\"new\":\"hello, halfway there\"}",
            400,
            100),
        llm.fake.openAiToolCall("list_files", "{\"path\":\".\"}", 400, 100));
    String task = "Rewrite the greeting in README.md";
    var response =
        llm.bed.gateway.api(
            "POST",
            "/api/v1/repos/" + REPO + "/agent-jobs",
            llm.bed.gateway.ownerToken,
            new JsonObject().put("task", task).encode());
    assertEquals(201, response.statusCode(), response.body());
    String id = new JsonObject(response.body()).getString("id");
    openJob(id);

    browser.waitFor(
        Duration.ofSeconds(150),
        d ->
            d.findElement(By.id("status")).getText().equals("finished: budget_exceeded")
                ? true
                : null);
    JsonObject job = llm.bed.job(REPO, id);
    assertNull(job.getValue("proposal_sha"), job.encodePrettily());
    browser.waitFor(
        d -> d.findElements(By.cssSelector("#diff section.file")).size() == 1 ? true : null);
    String note = browser.byId("partial-note").getText();
    assertTrue(
        note.startsWith(
            "Partial work, the job ended budget_exceeded (its model token budget was spent): "
                + "this is what the agent had pushed to refs/agents/"
                + id
                + "/partial"),
        note);
    assertTrue(note.endsWith("It is shown for review only and cannot be approved."), note);
    assertEquals("Partial work", browser.byId("diff-heading").getText());
    assertEquals(job.getString("partial_sha"), browser.byId("partial-sha").getText());
    assertTrue(browser.byId("diff-files").getText().contains("README.md"));
    assertTrue(
        browser.byId("diff").getText().contains("hello, halfway there"),
        browser.byId("diff").getText());
    assertFalse(browser.byId("approve").isDisplayed(), "partial work is not offered for approval");
    assertTrue(browser.byId("reject").isEnabled(), "it can be rejected");

    List<String> calls = texts("#model-calls details summary");
    assertTrue(calls.size() >= 2, calls.toString());
    assertTrue(
        calls.get(0).startsWith("#1 " + MODEL + " → 200, 400 in / 100 out tokens"),
        calls.toString());
    assertTrue(
        calls.get(1).startsWith("#2 " + MODEL + " → 200, 400 in / 100 out tokens"),
        calls.toString());
    Object request =
        browser.js("return document.querySelector('#model-calls details pre').textContent");
    assertTrue(request.toString().contains(task), "the exact request the agent sent: " + request);
    assertTrue(
        egressVias().containsAll(List.of("git_relay", "model_endpoint")), egressVias().toString());
    List<String> modelTargets =
        egressRows().stream()
            .filter(r -> r.get(2).equals("model_endpoint"))
            .map(r -> r.get(1))
            .toList();
    assertTrue(
        modelTargets.size() >= 2
            && modelTargets.stream().allMatch(t -> t.equals("POST 127.0.0.1:" + llm.fake.port())),
        "each model call, to the provider: " + modelTargets);
    Path shot = browser.fullPageScreenshot("proposal-partial", 3200);
    Files.createDirectories(DOC_IMAGES);
    Files.copy(
        shot, DOC_IMAGES.resolve("proposal-partial.png"), StandardCopyOption.REPLACE_EXISTING);
  }

  // ---- helpers
  // --------------------------------------------------------------------------------------------

  private static String submit(String task, String exec, String testCommand) throws Exception {
    JsonObject body = new JsonObject().put("task", task).put("exec", exec);
    if (testCommand != null) {
      body.put("test_command", testCommand);
    }
    var response =
        llm.bed.gateway.api(
            "POST",
            "/api/v1/repos/" + REPO + "/agent-jobs",
            llm.bed.gateway.ownerToken,
            body.encode());
    assertEquals(201, response.statusCode(), response.body());
    return new JsonObject(response.body()).getString("id");
  }

  private static void openJob(String id) {
    browser.open("/repos/" + REPO + "/agent-jobs/" + id);
    browser.waitFor(d -> d.findElement(By.id("task")).getText().equals("Loading…") ? null : true);
  }

  private static String jobStatus(String id) throws Exception {
    return llm.bed.job(REPO, id).getString("status");
  }

  /** The text of every line in the log panel, in order. */
  @SuppressWarnings("unchecked")
  private static List<String> logLines() {
    return (List<String>)
        browser.js("return Array.from(document.querySelectorAll('#log .ln'), l => l.textContent)");
  }

  /** The numbers of the log's {@code line-N} lines, in the order shown. */
  private static List<Integer> numberedLines() {
    return logLines().stream()
        .filter(l -> l.matches("line-\\d+"))
        .map(l -> Integer.parseInt(l.substring(5)))
        .toList();
  }

  private static boolean logEnded() {
    return Boolean.TRUE.equals(
        browser.js(
            "const log = document.getElementById('log');"
                + " return log.dataset.ended === 'true' && log.dataset.idle === 'true'"));
  }

  /** Waits for the end frame and for everything received to be rendered. */
  private static void awaitLogEnd() {
    browser.waitFor(Duration.ofSeconds(150), d -> logEnded() ? true : null);
  }

  /** The "Via" of every network attempt in the page's table. */
  private static List<String> egressVias() {
    return egressRows().stream().map(r -> r.get(2)).distinct().toList();
  }

  /**
   * The text of every element {@code css} selects, read in one script (the page may re-render it
   * meanwhile).
   */
  @SuppressWarnings("unchecked")
  private static List<String> texts(String css) {
    return (List<String>)
        browser.js(
            "return [...document.querySelectorAll(arguments[0])].map(e => e.innerText.trim())",
            css);
  }

  /**
   * The cells' text of every row of the network-attempts table, read in one script: the page
   * re-renders the table as attempts stream in, so rows read one by one could be replaced halfway.
   */
  @SuppressWarnings("unchecked")
  private static List<List<String>> egressRows() {
    return (List<List<String>>)
        browser.js(
            "return [...document.querySelectorAll('#egress tbody tr')]"
                + ".map(r => [...r.cells].map(c => c.innerText.trim()))");
  }

  /** In one script: the audit table is re-rendered on every refresh. */
  @SuppressWarnings("unchecked")
  private static List<String> auditEvents() {
    return (List<String>)
        browser.js(
            "return [...document.querySelectorAll('#audit tbody tr')].map(r => r.dataset.event)");
  }

  private static String refs() throws Exception {
    return llm.bed.git.refs(llm.bed.gateway.repoDir(REPO));
  }

  private static String rev(String ref) throws Exception {
    return llm.bed.git.ok(llm.bed.gateway.repoDir(REPO), "rev-parse", ref).output().strip();
  }
}
