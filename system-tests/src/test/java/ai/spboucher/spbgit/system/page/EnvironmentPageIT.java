package ai.spboucher.spbgit.system.page;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.spboucher.spbgit.gateway.RunnerStandIn;
import ai.spboucher.spbgit.gateway.TestGateway;
import ai.spboucher.spbgit.proto.CacheOutcome;
import ai.spboucher.spbgit.proto.JobRequest;
import ai.spboucher.spbgit.proto.JobStatus;
import ai.spboucher.spbgit.proto.StatusChange;
import ai.spboucher.spbgit.testsupport.GitCli;
import io.nats.client.Connection;
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
 * The proposal page shows a job's environment (image, digest, cache outcome, both egress lists, the
 * setup script collapsed, all as text), what a queued job waits for, and, before the Approve
 * button, a warning when the proposal changes {@code .spbgit/}; what the runner reported of setup
 * (the restored cache's producer, linked; whether the cache was kept; what setup changed in the
 * checkout, as text), and that a proposal changing a cache key file has its dependencies set up
 * only once approved. Real headless Chromium, gateway, NATS and git; the test reports the job's
 * start and end as a runner does (no runner or container is needed for what the page shows).
 */
class EnvironmentPageIT {

  private static final String WARNING =
      "This proposal changes .spbgit/ (the repository's job environment): "
          + "approving it changes what future jobs may reach";

  @TempDir static Path tmp;
  static PageBed bed;
  static TestGateway gateway;
  static Connection runner;
  static Browser browser;

  @BeforeAll
  static void start() throws Exception {
    bed = PageBed.start(tmp, new JsonObject());
    gateway = bed.gateway;
    runner = bed.runner;
    browser = bed.browser;
  }

  @AfterAll
  static void stop() throws Exception {
    if (bed != null) {
      bed.close();
    }
  }

  @Test
  void showsTheEnvironmentWhatAQueuedJobWaitsForAndWarnsBeforeApprovingAChangeToIt()
      throws Exception {
    GitCli git = new GitCli(Files.createDirectories(tmp.resolve("home")));
    gateway.createRepo("py");
    Path work = git.workTree(tmp, "py");
    Files.createDirectories(work.resolve(".spbgit"));
    Files.writeString(
        work.resolve(".spbgit/agent.yml"),
        """
        image: python
        setup: |
          echo '<img src=x onerror="document.title=1">'
          pip install -r requirements.txt
        setup_egress: [pypi.example.org:443]
        egress: [api.example.org:443]
        cache: [/work/.venv]
        """);
    git.ok(work, "add", ".");
    git.ok(work, "commit", "-q", "-m", "environment");
    git.ok(work, "push", "-q", gateway.pushUrl("py", gateway.ownerToken), "main");
    HttpResponse<String> created =
        gateway.api(
            "POST",
            "/api/v1/repos/py/agent-jobs",
            gateway.ownerToken,
            new JsonObject().put("task", "widen the environment").put("exec", "true").encode());
    assertEquals(201, created.statusCode(), created.body());
    String id = new JsonObject(created.body()).getString("id");

    openJob(id);
    assertEquals("Waiting for a runner offering image 'python'.", browser.text("waiting-for"));
    assertEquals("python", browser.text("environment-image"));
    String environment = browser.text("environment");
    assertTrue(
        environment.contains("pypi.example.org:443")
            && environment.contains("api.example.org:443")
            && environment.contains("/work/.venv"),
        environment);
    assertNull(
        browser.byId("setup-script").getAttribute("open"), "the setup script starts collapsed");
    assertTrue(
        browser.driver.findElements(By.cssSelector("#environment img")).isEmpty(),
        "the script is text");
    assertFalse(browser.byId("environment-warning").isDisplayed());

    JobRequest request = RunnerStandIn.queuedRequest(runner, gateway, id);
    RunnerStandIn.publishStatus(
        runner,
        id,
        1,
        StatusChange.newBuilder()
            .setStatus(JobStatus.STARTED)
            .setRunnerId("r1")
            .setContainerId("c1")
            .setImageDigest("sha256:" + "cd".repeat(32))
            .setCache(CacheOutcome.CACHE_MISS)
            .build());
    Files.writeString(
        work.resolve(".spbgit/agent.yml"), "image: python\negress: [evil.example.org:443]\n");
    git.ok(work, "commit", "-q", "-am", "widen");
    git.ok(
        work,
        "push",
        "-q",
        gateway.pushUrl("py", RunnerStandIn.jobToken(gateway, request)),
        "HEAD:refs/agents/" + id + "/proposal");
    RunnerStandIn.publishFinishedOk(runner, id, "c1");

    browser.waitFor(d -> d.findElement(By.id("environment-warning")).isDisplayed() ? true : null);
    assertEquals(WARNING, browser.text("environment-warning"));
    // The page learns the job's end from its next poll, which may come after the diff's warning.
    browser.waitFor(d -> d.findElement(By.id("approve")).isEnabled() ? true : null);
    assertFalse(browser.byId("waiting-for").isDisplayed(), "a runner has it");
    assertEquals("sha256:" + "cd".repeat(32), browser.text("image-digest"));
    assertEquals("miss (setup ran)", browser.text("environment-cache"));
    assertEquals(
        Boolean.TRUE,
        browser.js(
            "const w = document.getElementById('environment-warning');"
                + " return (w.compareDocumentPosition(document.getElementById('approve'))"
                + " & Node.DOCUMENT_POSITION_FOLLOWING) !== 0"),
        "the warning comes before the Approve button");
    assertFalse(
        browser.byId("approve").getAttribute("disabled") != null,
        "the proposal can still be approved");
    assertEquals(List.of(), browser.pageProblems(), "console errors or CSP refusals");
    browser.screenshot("proposal-environment");
  }

  @Test
  void showsTheCachesProducerWhatSetupChangedAndThatChangedDependenciesWaitForApproval()
      throws Exception {
    GitCli git = new GitCli(Files.createDirectories(tmp.resolve("home")));
    gateway.createRepo("js");
    Path work = git.workTree(tmp, "js");
    Files.createDirectories(work.resolve(".spbgit"));
    Files.writeString(
        work.resolve(".spbgit/agent.yml"),
        """
        image: node
        setup: cd /work/repo && npm ci
        setup_egress: [registry.npmjs.org:443]
        cache: [/work/repo/node_modules]
        cache_key_files: [package-lock.json]
        """);
    Files.writeString(work.resolve("package-lock.json"), "{}\n");
    git.ok(work, "add", ".");
    git.ok(work, "commit", "-q", "-m", "environment");
    git.ok(work, "push", "-q", gateway.pushUrl("js", gateway.ownerToken), "main");
    String base = git.ok(work, "rev-parse", "HEAD").output().strip();
    HttpResponse<String> created =
        gateway.api(
            "POST",
            "/api/v1/repos/js/agent-jobs",
            gateway.ownerToken,
            new JsonObject().put("task", "bump a dependency").put("exec", "true").encode());
    assertEquals(201, created.statusCode(), created.body());
    String id = new JsonObject(created.body()).getString("id");

    JobRequest request = RunnerStandIn.queuedRequest(runner, gateway, id);
    RunnerStandIn.publishStatus(
        runner,
        id,
        1,
        StatusChange.newBuilder()
            .setStatus(JobStatus.STARTED)
            .setRunnerId("r1")
            .setContainerId("c1")
            .setCache(CacheOutcome.CACHE_HIT)
            .setCacheKey("ab".repeat(32))
            .setCacheProducerJob("mx0producer-1")
            .setCacheProducerCommit(base)
            .build());
    Files.writeString(work.resolve("package-lock.json"), "{\"bumped\": true}\n");
    git.ok(work, "commit", "-q", "-am", "bump");
    git.ok(
        work,
        "push",
        "-q",
        gateway.pushUrl("js", RunnerStandIn.jobToken(gateway, request)),
        "HEAD:refs/agents/" + id + "/proposal");
    RunnerStandIn.publishStatus(
        runner,
        id,
        2,
        StatusChange.newBuilder()
            .setStatus(JobStatus.FINISHED)
            .setExitReason("ok")
            .setRunnerId("r1")
            .setContainerId("c1")
            .setCacheNote("not cached: 1048576 bytes over the limit")
            .addSetupChanges(" M NOTES.md")
            .addSetupChanges("?? <b>.npmrc</b>")
            .build());

    browser.open("/repos/js/agent-jobs/" + id);
    browser.waitFor(d -> d.findElement(By.id("approve")).isEnabled() ? true : null);
    browser.waitFor(d -> d.findElement(By.id("dependencies-note")).isDisplayed() ? true : null);
    String note = browser.text("dependencies-note");
    assertTrue(note.startsWith("This work changes package-lock.json"), note);
    assertTrue(note.contains("once you approve it"), note);
    assertTrue(
        browser
            .text("cache-restored")
            .contains("kept by job mx0producer-1 from " + base.substring(0, 12)),
        browser.text("cache-restored"));
    assertEquals("/repos/js/agent-jobs/mx0producer-1", browser.attribute("cache-producer", "href"));
    assertEquals("not cached: 1048576 bytes over the limit", browser.text("cache-note"));
    browser.byId("setup-changes").findElement(By.tagName("summary")).click();
    String changes = browser.text("setup-changes");
    assertTrue(changes.contains(" M NOTES.md") || changes.contains("M NOTES.md"), changes);
    assertTrue(changes.contains("?? <b>.npmrc</b>"), "shown as text: " + changes);
    assertTrue(
        browser.driver.findElements(By.cssSelector("#setup-changes b")).isEmpty(),
        "no markup from the runner's report");
    assertFalse(browser.byId("environment-warning").isDisplayed());
    assertEquals(List.of(), browser.pageProblems(), "console errors or CSP refusals");
  }

  private static void openJob(String id) {
    browser.open("/repos/py/agent-jobs/" + id);
    browser.waitFor(d -> d.findElement(By.id("task")).getText().equals("Loading…") ? null : true);
  }
}
