package ai.spboucher.spbgit.system.page;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.spboucher.spbgit.runner.JobTestBed;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.openqa.selenium.By;
import org.openqa.selenium.WebElement;

/**
 * Signing in and out, the jobs lists, and starting a job from a repository's page, in a real
 * Chromium.
 */
class JobsPageIT {

  @TempDir static Path tmp;
  static JobTestBed bed;
  static Browser browser;

  @BeforeAll
  static void start() throws Exception {
    Browser.requireChromium();
    bed = JobTestBed.start(tmp, "60s");
    bed.startRunner("r1", Map.of());
    bed.createRepo("demo", Map.of("README.md", "hello\n"));
    browser = Browser.start(tmp.resolve("chromium"), bed.gateway.baseUrl);
  }

  @AfterAll
  static void stop() throws Exception {
    if (browser != null) {
      browser.close();
    }
    if (bed != null) {
      bed.close();
    }
  }

  @Test
  void signInStartAJobFollowItAndSignOut() throws Exception {
    browser.open("/login");
    browser.driver.manage().deleteAllCookies();
    browser.open("/repos/demo/agent-jobs");
    browser.waitFor(d -> d.getCurrentUrl().contains("/login?next=") ? true : null);

    browser.byId("token").sendKeys("not-a-token");
    browser.byId("sign-in").click();
    WebElement error =
        browser.waitFor(
            d ->
                d.findElement(By.id("login-error")).isDisplayed()
                    ? d.findElement(By.id("login-error"))
                    : null);
    assertTrue(error.getText().startsWith("Sign-in failed"), error.getText());

    browser.byId("token").clear();
    browser.byId("token").sendKeys(bed.gateway.ownerToken);
    browser.byId("sign-in").click();
    browser.waitFor(
        d ->
            d.getCurrentUrl().equals(bed.gateway.baseUrl + "/repos/demo/agent-jobs") ? true : null);
    assertEquals("Agent jobs · demo", browser.byId("title").getText());

    browser.byId("task").sendKeys("Say hello from the form");
    browser.byId("exec").sendKeys("echo hello > hello.txt");
    browser.byId("test-command").sendKeys("test -f hello.txt");
    browser.byId("start-job").click();
    browser.waitFor(
        d -> d.getCurrentUrl().matches(".*/repos/demo/agent-jobs/[a-z0-9-]+$") ? true : null);
    String id = browser.driver.getCurrentUrl().replaceAll(".*/", "");
    browser.waitFor(
        d -> d.findElement(By.id("status")).getText().equals("finished: ok") ? true : null);
    browser.waitFor(
        d -> d.findElement(By.id("test-result")).getText().contains("tests passed") ? true : null);

    browser.open("/agent-jobs");
    WebElement row =
        browser.waitFor(
            d ->
                d.findElements(By.cssSelector("#jobs tr[data-job='" + id + "']")).stream()
                    .findFirst()
                    .orElse(null));
    List<String> cells =
        row.findElements(By.tagName("td")).stream().map(WebElement::getText).toList();
    assertEquals("finished: ok", cells.get(0));
    assertTrue(cells.get(1).endsWith("ago"), cells.get(1));
    assertEquals("Say hello from the form", cells.get(2));
    assertEquals("demo", cells.get(3));
    row.findElement(By.linkText("Say hello from the form")).click();
    browser.waitFor(d -> d.getCurrentUrl().endsWith("/repos/demo/agent-jobs/" + id) ? true : null);

    browser.byId("sign-out").click();
    browser.waitFor(d -> d.getCurrentUrl().endsWith("/login") ? true : null);
    browser.open("/agent-jobs");
    browser.waitFor(d -> d.getCurrentUrl().contains("/login?next=") ? true : null);
    assertEquals(List.of(), browser.pageProblems());
  }

  @Test
  void loginIgnoresANextParameterPointingElsewhere() {
    browser.open("/login");
    browser.driver.manage().deleteAllCookies();
    browser.open(
        "/login?next="
            + java.net.URLEncoder.encode(
                "//evil.invalid/x", java.nio.charset.StandardCharsets.UTF_8));
    browser.byId("token").sendKeys(bed.gateway.ownerToken);
    browser.byId("sign-in").click();
    browser.waitFor(
        d -> d.getCurrentUrl().equals(bed.gateway.baseUrl + "/agent-jobs") ? true : null);
  }
}
