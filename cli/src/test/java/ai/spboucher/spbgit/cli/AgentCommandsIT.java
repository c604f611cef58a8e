package ai.spboucher.spbgit.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.spboucher.spbgit.cli.text.AnsiFilter;
import ai.spboucher.spbgit.runner.JobTestBed;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code spbgit agent ...} and {@code spbgit audit} as a process against the real thing:
 * nats-server, a gateway, a runner with two slots, and job containers in the Docker engine.
 */
class AgentCommandsIT {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Pattern FINISHED = Pattern.compile("(?m)^job (\\S+) finished: ");

  @TempDir static Path tmp;
  static JobTestBed bed;

  @BeforeAll
  static void start() throws Exception {
    bed = JobTestBed.start(tmp, "60s");
    bed.startRunner("r1", Map.of("SPB_RUNNER_SLOTS", "2"));
    bed.createRepo("demo", Map.of("README.md", "hello\n"));
  }

  @AfterAll
  static void stop() throws Exception {
    if (bed != null) {
      bed.close();
    }
  }

  private static CliProcess owner() throws Exception {
    return CliProcess.owner(tmp.resolve("home"), bed.gateway);
  }

  /** {@code spbgit agent run demo <task> --exec <command> <options...>}. */
  private static CliProcess.Result runExec(
      CliProcess cli, String task, String command, String... options) throws Exception {
    List<String> args = new ArrayList<>(List.of("agent", "run", "demo", task, "--exec", command));
    args.addAll(List.of(options));
    return cli.run(args.toArray(String[]::new));
  }

  private static String finishedJobId(CliProcess.Result result) {
    Matcher matcher = FINISHED.matcher(result.out());
    assertTrue(matcher.find(), result.toString());
    return matcher.group(1);
  }

  private static JsonNode show(String id) throws Exception {
    CliProcess.Result shown = owner().run("agent", "show", "demo", id, "--json");
    assertEquals(0, shown.exit(), shown.toString());
    return JSON.readTree(shown.out());
  }

  private static String git(String... args) throws Exception {
    return bed.git.ok(bed.gateway.repoDir("demo"), args).output().strip();
  }

  @Test
  void runFollowStreamsThePlainLogAndEndsWithReviewPageAndDiffStat() throws Exception {
    CliProcess.Result run =
        runExec(
            owner(),
            "Add a greeting",
            "printf '\\033[31mred text\\033[0m\\n\\033]0;evil title\\007'; echo hello > greeting.txt",
            "--test",
            "grep -q hello greeting.txt",
            "--follow");
    assertEquals(0, run.exit(), run.toString());
    String id = finishedJobId(run);
    assertTrue(run.out().contains("red text"), run.out());
    assertFalse(
        run.out().contains("\u001b") || run.out().contains("evil title"),
        "no escapes when piped: " + run);
    assertTrue(
        run.out().contains(AnsiFilter.strip(bed.log(id))),
        "the whole log, in order:\n" + run.out());
    assertTrue(run.out().contains("job " + id + " finished: ok (tests passed)"), run.out());
    assertTrue(
        run.out().contains("review: " + bed.gateway.baseUrl + "/repos/demo/agent-jobs/" + id),
        run.out());
    assertTrue(
        run.out().contains(" greeting.txt | 1 +\n 1 file changed, 1 insertion(+)"), run.out());

    CliProcess.Result coloured = owner().run("agent", "logs", "demo", id, "--color=always");
    assertTrue(coloured.out().contains("\u001b[31mred text\u001b[0m"), coloured.out());
    assertFalse(
        coloured.out().contains("evil title"), "only colours pass, even with --color=always");

    String proposal = show(id).path("proposal_sha").asText();
    CliProcess.Result approved = owner().run("agent", "approve", "demo", id);
    assertEquals(0, approved.exit(), approved.toString());
    assertEquals(proposal, git("rev-parse", "refs/heads/agent/" + id));
    assertEquals("approved", show(id).path("decision").path("decision").asText());
    CliProcess.Result again = owner().run("agent", "approve", "demo", id, "--branch", "elsewhere");
    assertEquals(ExitCode.CONFLICT, again.exit(), again.toString());
    assertEquals(1, again.errLines().size(), again.toString());
  }

  @Test
  void runFollowExitsNonZeroWhenTheJobFails() throws Exception {
    CliProcess.Result run = runExec(owner(), "Fail", "echo about to fail; exit 3", "--follow");
    assertEquals(ExitCode.FAILED, run.exit(), run.toString());
    String id = finishedJobId(run);
    assertTrue(run.out().contains("about to fail"), run.out());
    assertTrue(run.out().contains("job " + id + " finished: exit_code:3"), run.out());

    CliProcess.Result verified = owner().run("audit", "--verify");
    assertEquals(0, verified.exit(), verified.toString());
    assertTrue(verified.out().contains("intact"), verified.out());
    JsonNode entries = JSON.readTree(owner().run("audit", "--job", id, "--json").out());
    assertEquals("job_created", entries.get(0).path("event").asText(), entries.toString());
    assertTrue(owner().run("audit", "--repo", "demo").out().contains("job_finished"));
  }

  @Test
  void followResumesAfterDroppedConnectionsWithoutGapsOrRepeats() throws Exception {
    try (DroppingProxy proxy =
        new DroppingProxy(Integer.parseInt(bed.gateway.baseUrl.replaceAll(".*:", "")), 3, 700)) {
      CliProcess.Result run =
          runExec(
              owner().gateway(proxy.url(), bed.gateway.ownerToken),
              "Count slowly",
              "for i in $(seq 1 60); do echo \"line $i\"; sleep 0.05; done",
              "--follow");
      assertEquals(0, run.exit(), run.toString());
      String id = finishedJobId(run);
      assertTrue(
          proxy.cuts() >= 2,
          "the proxy cut " + proxy.cuts() + " of " + proxy.webSockets() + " websockets");
      assertTrue(proxy.webSockets() > proxy.cuts(), "it reconnected after each cut");
      assertTrue(
          run.out().contains(AnsiFilter.strip(bed.log(id))),
          "the whole log, once, in order:\n" + run.out());
      for (int i = 1; i <= 60; i++) {
        String line = "line " + i + "\n";
        assertEquals(run.out().indexOf(line), run.out().lastIndexOf(line), "exactly once: " + line);
      }
    }
  }

  @Test
  void jsonRunRejectAndDeleteRefs() throws Exception {
    CliProcess.Result run =
        runExec(owner(), "Propose something", "echo maybe > maybe.txt", "--follow", "--json");
    assertEquals(0, run.exit(), run.toString());
    JsonNode job = JSON.readTree(run.out());
    String id = job.path("id").asText();
    assertEquals("ok", job.path("exit_reason").asText(), run.toString());
    assertTrue(
        run.err().contains("[spb-agent]"), "the log goes to stderr with --json: " + run.err());
    assertTrue(job.path("proposal_sha").isTextual(), job.toString());

    CliProcess.Result rejected = owner().run("agent", "reject", "demo", id);
    assertEquals(0, rejected.exit(), rejected.toString());
    assertEquals("rejected", show(id).path("decision").path("decision").asText());
    assertEquals(ExitCode.CONFLICT, owner().run("agent", "approve", "demo", id).exit());

    CliProcess.Result refused = owner().run("agent", "delete-refs", "demo", id);
    assertEquals(ExitCode.USAGE, refused.exit(), refused.toString());
    assertEquals(1, refused.errLines().size(), refused.toString());
    assertTrue(
        bed.git.refs(bed.gateway.repoDir("demo")).contains("refs/agents/" + id + "/proposal"));
    CliProcess.Result deleted = owner().run("agent", "delete-refs", "demo", id, "--yes");
    assertEquals(0, deleted.exit(), deleted.toString());
    assertTrue(deleted.out().contains("deleted refs/agents/" + id + "/proposal"), deleted.out());
    assertFalse(bed.git.refs(bed.gateway.repoDir("demo")).contains("refs/agents/" + id + "/"));
  }

  @Test
  void cancelStopsARunningJob() throws Exception {
    CliProcess.Result started = runExec(owner(), "Sleep", "sleep 120", "--json");
    assertEquals(0, started.exit(), started.toString());
    String id = JSON.readTree(started.out()).path("id").asText();
    CliProcess.Result listed = owner().run("agent", "list", "demo");
    assertTrue(listed.out().contains(id), listed.out());

    CliProcess.Result cancelled = owner().run("agent", "cancel", "demo", id);
    assertEquals(0, cancelled.exit(), cancelled.toString());
    CliProcess.Result followed = owner().run("agent", "logs", "-f", "demo", id);
    assertEquals(ExitCode.FAILED, followed.exit(), followed.toString());
    assertTrue(show(id).path("exit_reason").asText().contains("cancel"), show(id).toString());
    assertEquals(ExitCode.CONFLICT, owner().run("agent", "cancel", "demo", id).exit());
  }
}
