package ai.spboucher.spbgit.system.page;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.spboucher.spbgit.gateway.RunnerStandIn;
import ai.spboucher.spbgit.gateway.TestGateway;
import ai.spboucher.spbgit.proto.CodingAgent;
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
import org.openqa.selenium.WebElement;

/**
 * The proposal page and the jobs list say which agent a job runs: the agent and its pinned version,
 * then the version the runner reported (shown as text whatever it holds), and for an exec job with
 * the model endpoint, that it has it. Real headless Chromium, gateway, NATS and git; the test
 * reports the start and end as a runner does.
 */
class AgentPageIT {

  private static final String HOSTILE_VERSION = "2.1.328 <img src=x onerror=\"window.__pwned=1\">";

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
    bed.stack.createRepo("demo", "demo");
  }

  @AfterAll
  static void stop() throws Exception {
    if (bed != null) {
      bed.close();
    }
  }

  @Test
  void showsTheAgentItsVersionAsTextAndTheModelEndpointOfAnExecJob() throws Exception {
    String claude = create(new JsonObject().put("task", "Fix it").put("agent", "claude-code"));
    openJob(claude);
    assertEquals(
        "claude-code " + CodingAgent.CLAUDE_CODE.pinnedVersion(),
        browser.text("coding-agent"),
        "the pinned version before a runner reports one");

    RunnerStandIn.publishStatus(
        runner,
        claude,
        1,
        StatusChange.newBuilder()
            .setStatus(JobStatus.STARTED)
            .setRunnerId("r1")
            .setContainerId("c1")
            .setAgent("claude-code")
            .setAgentVersion(HOSTILE_VERSION)
            .build());
    RunnerStandIn.publishStatus(
        runner,
        claude,
        2,
        StatusChange.newBuilder()
            .setStatus(JobStatus.FINISHED)
            .setExitReason("agent_unavailable")
            .setRunnerId("r1")
            .setDetail("claude-code speaks anthropic; this runner's provider is openai")
            .build());
    browser.waitFor(
        d -> d.findElement(By.id("status")).getText().startsWith("finished") ? true : null);
    assertEquals("claude-code " + HOSTILE_VERSION, browser.text("coding-agent"));
    assertTrue(
        browser.driver.findElements(By.cssSelector("#facts img")).isEmpty(), "the version is text");
    assertEquals(null, browser.js("return window.__pwned ?? null"));
    assertTrue(
        browser.text("exit-reason").startsWith("agent_unavailable ("), browser.text("exit-reason"));
    assertEquals(
        Boolean.TRUE,
        browser.js(
            "const facts = [...document.querySelectorAll('#facts dt')].map(dt => dt.textContent);"
                + " return facts.indexOf('Agent') >= 0 && facts.indexOf('Agent') < facts.indexOf('Model')"),
        "the agent is shown next to the model");
    assertTrue(browser.driver.findElements(By.id("model-endpoint")).isEmpty(), "an llm job");

    String exec =
        create(
            new JsonObject()
                .put("task", "Run my agent")
                .put("exec", "my-agent")
                .put("model", "gpt-test"));
    openJob(exec);
    assertTrue(
        browser.text("model-endpoint").startsWith("given to the exec command (SPB_MODEL_BASE_URL)"),
        browser.text("model-endpoint"));
    assertTrue(browser.driver.findElements(By.id("coding-agent")).isEmpty(), "no coding agent");
    String plainExec = create(new JsonObject().put("task", "Just run").put("exec", "true"));

    browser.open("/repos/demo/agent-jobs");
    browser.waitFor(
        d -> d.findElements(By.cssSelector("#jobs tbody tr")).size() == 3 ? true : null);
    assertEquals("claude-code", agentCell(claude));
    assertEquals("exec + model endpoint", agentCell(exec));
    assertEquals("exec", agentCell(plainExec));
    assertEquals(List.of(), browser.pageProblems(), "console errors or CSP refusals");
  }

  @Test
  void showsWhichInstructionsTheJobRanWith() throws Exception {
    gateway.createRepo("instructed");
    Path work = git.workTree(tmp, "instructed");
    Files.writeString(
        work.resolve("AGENTS.md"), "Run the tests. <img src=x onerror=\"window.__pwned=1\">\n");
    git.ok(work, "add", ".");
    git.ok(work, "commit", "-q", "-m", "instructions for agents");
    git.ok(work, "push", "-q", gateway.pushUrl("instructed", gateway.ownerToken), "main");
    String blob = git.ok(work, "rev-parse", "main:AGENTS.md").output().strip();

    openJob("instructed", create("instructed", new JsonObject().put("task", "Fix it")));
    assertEquals(
        "AGENTS.md at " + blob.substring(0, 12) + " (default branch)",
        browser.text("instructions"));
    assertEquals(null, browser.js("return window.__pwned ?? null"));
    browser.screenshot("instructions");

    openJob(
        "instructed",
        create("instructed", new JsonObject().put("task", "Fix it").put("agent", "codex")));
    assertEquals(
        "the checkout's own (codex reads its instruction files from its checkout of the base)",
        browser.text("instructions"));

    gateway.createRepo("uninstructed");
    git.ok(
        git.workTree(tmp, "uninstructed"),
        "push",
        "-q",
        gateway.pushUrl("uninstructed", gateway.ownerToken),
        "main");
    openJob("uninstructed", create("uninstructed", new JsonObject().put("task", "Fix it")));
    assertEquals("none (no AGENTS.md on the default branch)", browser.text("instructions"));
    assertEquals(List.of(), browser.pageProblems(), "console errors or CSP refusals");
  }

  private static String agentCell(String job) {
    WebElement row = browser.driver.findElement(By.cssSelector("#jobs tr[data-job='" + job + "']"));
    List<WebElement> cells = row.findElements(By.tagName("td"));
    return cells.get(cells.size() - 1).getText();
  }

  private static String create(JsonObject body) throws Exception {
    return create("demo", body);
  }

  private static String create(String repo, JsonObject body) throws Exception {
    HttpResponse<String> created =
        gateway.api(
            "POST", "/api/v1/repos/" + repo + "/agent-jobs", gateway.ownerToken, body.encode());
    assertEquals(201, created.statusCode(), created.body());
    return new JsonObject(created.body()).getString("id");
  }

  private static void openJob(String id) {
    openJob("demo", id);
  }

  private static void openJob(String repo, String id) {
    browser.open("/repos/" + repo + "/agent-jobs/" + id);
    browser.waitFor(d -> d.findElement(By.id("task")).getText().equals("Loading…") ? null : true);
  }
}
