package ai.spboucher.spbgit.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.spboucher.spbgit.runner.LlmBed;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * An llm job stopped by its token budget, seen from the command line: {@code agent run --follow}
 * names the partial work and its diff stat and exits non-zero, and {@code agent approve} refuses
 * it. The real agent in the agent image, driven by a fake OpenAI-compatible provider behind the
 * runner's metering model endpoint.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class AgentPartialWorkIT {

  private static final String KEY = "sk-cli-partial-7f6e5d4c3b2a";
  private static final String MODEL = "gpt-test";
  private static final Pattern PARTIAL =
      Pattern.compile(
          "(?m)^partial work \\(for review only, cannot be approved\\): refs/agents/(\\S+)/partial at ([0-9a-f]{40})$");

  @RegisterExtension
  static final LlmBed llm =
      LlmBed.budgetedAgent(KEY, MODEL, "partial")
          .repo("demo", Map.of("README.md", "# Demo\nhello world\nbye\n"));

  @Test
  void aJobStoppedByItsBudgetShowsItsPartialWorkWhichCannotBeApproved() throws Exception {
    // The first call spends half the budget and edits; the second spends the rest, so the runner
    // stops the job.
    llm.fake.then(
        llm.fake.openAiToolCall(
            "replace_in_file",
            "{\"path\":\"README.md\",\"old\":\"bye\",\"new\":\"see you\"}",
            400,
            100),
        llm.fake.openAiToolCall("list_files", "{\"path\":\".\"}", 400, 100));
    CliProcess cli = CliProcess.owner(llm.tmp.resolve("home"), llm.bed.gateway);

    CliProcess.Result run =
        cli.run("agent", "run", "demo", "Say goodbye differently in README.md.", "--follow");

    assertEquals(ExitCode.FAILED, run.exit(), run.toString());
    assertTrue(run.out().contains(" finished: budget_exceeded"), run.toString());
    Matcher partial = PARTIAL.matcher(run.out());
    assertTrue(partial.find(), run.toString());
    String id = partial.group(1);
    assertEquals(
        llm.bed
            .git
            .ok(llm.bed.gateway.repoDir("demo"), "rev-parse", "refs/agents/" + id + "/partial")
            .output()
            .strip(),
        partial.group(2));
    assertTrue(run.out().contains("README.md"), "the partial work's diff stat: " + run);

    CliProcess.Result approve = cli.run("agent", "approve", "demo", id);
    assertEquals(ExitCode.CONFLICT, approve.exit(), approve.toString());
    assertTrue(approve.err().contains("partial work is for review only"), approve.toString());
    assertEquals(1, approve.err().strip().lines().count(), "one line: " + approve);
    assertEquals(
        "",
        llm.bed
            .git
            .ok(llm.bed.gateway.repoDir("demo"), "for-each-ref", "refs/heads/agent/")
            .output()
            .strip(),
        "no branch was made");
  }
}
