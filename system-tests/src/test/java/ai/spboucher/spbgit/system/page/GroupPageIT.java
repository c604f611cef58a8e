package ai.spboucher.spbgit.system.page;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.spboucher.spbgit.gateway.RunnerStandIn;
import ai.spboucher.spbgit.proto.JobStatus;
import ai.spboucher.spbgit.proto.StatusChange;
import ai.spboucher.spbgit.testsupport.GitCli;
import io.vertx.core.json.JsonObject;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.openqa.selenium.By;
import org.openqa.selenium.support.ui.Select;

/**
 * Best-of-N from the page, in a real Chromium: the start form's attempts field starts a group and
 * lands on the group's page, which lists the attempts side by side as they end; each attempt's page
 * links back to the group. The test plays the runner.
 */
class GroupPageIT {

  private static final Path DOC_IMAGES = Path.of("..", "docs", "images");

  @TempDir Path tmp;

  @Test
  void startsAGroupFromTheFormAndComparesItsAttempts() throws Exception {
    try (PageBed bed = PageBed.start(tmp, new JsonObject())) {
      GitCli git = bed.stack.git();
      Path work = bed.stack.createRepo("demo", "demo");
      Browser browser = bed.browser;
      browser.open("/repos/demo/agent-jobs");
      browser.byId("task").sendKeys("Say hello three ways");
      browser.byId("exec").sendKeys("echo hello > hello.txt");
      new Select(browser.byId("attempts")).selectByValue("3");
      browser.byId("start-job").click();
      browser.waitFor(
          d -> d.getCurrentUrl().matches(".*/repos/demo/agent-groups/[a-z0-9-]+$") ? true : null);
      // Read in one script each time: the group page re-renders its table on every refresh, so a
      // row found first and read after could be gone.
      List<String> ids =
          browser.waitFor(
              d -> {
                List<String> found = attemptColumn(browser, "tr => tr.dataset.job");
                return found.size() == 3 ? found : null;
              });
      assertEquals("Say hello three ways", browser.text("task"));

      // The first and the last attempt push changes of known sizes (README.md is "hello demo\n" on
      // main); the second fails without pushing anything.
      Map<String, Map<String, String>> changes =
          Map.of(
              ids.get(0),
              Map.of("hello.txt", "hello\n"),
              ids.get(2),
              Map.of("hello.txt", "hello\nworld\n", "README.md", "hi demo\n"));
      for (String id : ids) {
        RunnerStandIn.publishStarted(bed.runner, id, "");
        if (changes.containsKey(id)) {
          git.ok(work, "checkout", "-q", "-B", "attempt-" + id, "main");
          for (var file : changes.get(id).entrySet()) {
            Files.writeString(work.resolve(file.getKey()), file.getValue());
          }
          git.ok(work, "add", ".");
          git.ok(work, "commit", "-q", "-m", "Say hello\n\nAgent-Job: " + id);
          String token =
              RunnerStandIn.jobToken(
                  bed.gateway, RunnerStandIn.queuedRequest(bed.runner, bed.gateway, id));
          git.ok(
              work,
              "push",
              "-q",
              bed.gateway.pushUrl("demo", token),
              "HEAD:refs/agents/" + id + "/proposal");
        }
        RunnerStandIn.publishStatus(
            bed.runner,
            id,
            2,
            StatusChange.newBuilder()
                .setStatus(JobStatus.FINISHED)
                .setExitReason(id.equals(ids.get(1)) ? "exit_code:1" : "ok")
                .setRunnerId("r1")
                .build());
      }
      browser.waitFor(
          d ->
              attemptColumn(browser, "tr => tr.querySelector('td.exit-reason').innerText")
                      .equals(List.of("ok", "exit_code:1", "ok"))
                  ? true
                  : null);
      browser.waitFor(
          d ->
              attemptColumn(browser, "tr => tr.querySelector('td.diff-stat').innerText")
                      .equals(List.of("+1 −0 in 1 file", "—", "+3 −1 in 2 files"))
                  ? true
                  : null);
      Path shot = browser.fullPageScreenshot("group-page", 480);
      Files.createDirectories(DOC_IMAGES);
      Files.copy(shot, DOC_IMAGES.resolve("group-page.png"), StandardCopyOption.REPLACE_EXISTING);

      browser.driver.findElement(By.linkText(ids.get(0))).click();
      browser.waitFor(
          d -> d.getCurrentUrl().endsWith("/repos/demo/agent-jobs/" + ids.get(0)) ? true : null);
      String back =
          browser.waitFor(
              d ->
                  (String)
                      browser.js(
                          "const a = document.getElementById('group-link');"
                              + " return a && a.href ? a.href : null"));
      assertTrue(back.contains("/repos/demo/agent-groups/"), back);
      assertEquals(List.of(), browser.pageProblems());
    }
  }

  /** {@code column} (a JavaScript function of a row) of each attempt row, read in one script. */
  @SuppressWarnings("unchecked")
  static List<String> attemptColumn(Browser browser, String column) {
    return (List<String>)
        browser.js(
            "return [...document.querySelectorAll('#attempts tbody tr')].map(" + column + ")");
  }
}
