package ai.spboucher.spbgit.runner.page;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
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
 * The proposal page shows what the runner reported of the setup phase: the restored cache's key and
 * producer (linked to the job that kept it), whether this job's cache was kept, and what setup
 * changed in the checkout (as text, collapsed); and it says, when the proposal changes one of the
 * environment's cache key files, that the dependencies it names are set up only once approved. Real
 * headless Chromium, gateway, NATS and git; the test reports the job's start and end as a runner
 * does.
 */
class SetupRecordPageIT {

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
        gateway.pushUrl("js", request.getJobToken()),
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
    assertEquals(
        "/repos/js/agent-jobs/mx0producer-1",
        browser.byId("cache-producer").getDomAttribute("href"));
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
}
