package ai.spboucher.spbgit.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.spboucher.spbgit.proto.CodingAgent;
import ai.spboucher.spbgit.proto.StatusChange;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code spbgit agent run --agent} and {@code --exec --model} as a process against a real gateway
 * and NATS: the gateway's refusal of an unknown agent is one line and exit 1, and {@code agent
 * show} / {@code agent list} say which agent (and version) a job runs, or that an exec job has the
 * model endpoint. The test reports the start as a runner does.
 */
class AgentChoiceIT {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Pattern JOB = Pattern.compile("(?m)^job (\\S+) dispatched$");

  @RegisterExtension static final GatewayOnNats bed = new GatewayOnNats();

  @Test
  void runsTheNamedAgentRefusesAnUnknownOneAndShowsWhichRan() throws Exception {
    CliProcess owner = bed.owner();
    CliProcess.Result unknown = owner.run("agent", "run", "demo", "Fix it", "--agent", "aider");
    assertEquals(ExitCode.FAILED, unknown.exit(), unknown.toString());
    assertEquals(1, unknown.errLines().size(), unknown.toString());
    assertTrue(
        unknown.err().contains("unknown agent 'aider' (builtin, claude-code, codex, qwen-code)"),
        unknown.toString());

    String claude = jobOf(owner.run("agent", "run", "demo", "Fix it", "--agent", "claude-code"));
    String exec =
        jobOf(
            owner.run(
                "agent", "run", "demo", "Run mine", "--exec", "my-agent", "--model", "gpt-test"));
    CliProcess.Result queued = owner.run("agent", "show", "demo", claude);
    assertTrue(
        queued.out().contains("agent:    claude-code " + CodingAgent.CLAUDE_CODE.pinnedVersion()),
        queued.toString());

    bed.reportStarted(
        claude,
        StatusChange.newBuilder()
            .setAgent("claude-code")
            .setAgentVersion("2.1.328-local\u001b]0;title\u0007"));
    long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    JsonNode shown = JSON.readTree(owner.run("agent", "show", "demo", claude, "--json").out());
    while (!"started".equals(shown.path("status").asText()) && System.nanoTime() < deadline) {
      Thread.sleep(100);
      shown = JSON.readTree(owner.run("agent", "show", "demo", claude, "--json").out());
    }
    assertEquals("claude-code", shown.path("agent").asText(), shown.toString());
    CliProcess.Result started = owner.run("agent", "show", "demo", claude);
    assertTrue(
        started.out().contains("agent:    claude-code 2.1.328-local\n")
            && !started.out().contains("title"),
        "the runner's version, without its escape sequence: " + started);

    CliProcess.Result execShown = owner.run("agent", "show", "demo", exec);
    assertTrue(
        execShown.out().contains("agent:    exec command with the model endpoint\n"),
        execShown.toString());
    assertTrue(execShown.out().contains("model:    gpt-test\n"), execShown.toString());

    CliProcess.Result listed = owner.run("agent", "list", "demo");
    assertEquals(0, listed.exit(), listed.toString());
    assertTrue(listed.out().contains(" AGENT "), listed.out());
    assertTrue(rowOf(listed, claude).contains(" claude-code "), listed.out());
    assertTrue(rowOf(listed, exec).contains(" exec+model "), listed.out());
  }

  private static String jobOf(CliProcess.Result run) {
    assertEquals(0, run.exit(), run.toString());
    Matcher matcher = JOB.matcher(run.out());
    assertTrue(matcher.find(), run.toString());
    return matcher.group(1);
  }

  private static String rowOf(CliProcess.Result list, String job) {
    return list.out()
        .lines()
        .filter(line -> line.startsWith(job + " "))
        .findFirst()
        .orElseThrow(() -> new AssertionError("no row for " + job + ": " + list.out()));
  }
}
