package ai.spboucher.spbgit.cli;

import static ai.spboucher.spbgit.cli.GatewayOnNats.REPO;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.spboucher.spbgit.gateway.RunnerStandIn;
import ai.spboucher.spbgit.proto.JobRequest;
import ai.spboucher.spbgit.proto.StatusChange;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code spbgit agent revise} as a process against a real gateway, NATS and git: the revision the
 * gateway records carries the review and starts on the revised proposal, both jobs show the link in
 * {@code agent show}, and what the gateway refuses (an unknown job, a running job, {@code --exec}
 * on an llm job) is its message in one line with the status's exit code. The test takes each job
 * from the queue and reports it as a runner does, and pushes with the job's own token as the
 * runner's git relay does.
 */
class AgentReviseCommandIT {

  private static final Pattern CREATED = Pattern.compile("(?m)^job (\\S+) (\\S+)$");

  @RegisterExtension static final GatewayOnNats bed = new GatewayOnNats();

  @Test
  void revisesAFinishedJobWithTheReviewAndRefusesWhatTheGatewayRefuses() throws Exception {
    CliProcess cli = bed.owner();
    String exec =
        bed.createJob(new JsonObject().put("task", "Greet").put("exec", "echo hello >> README.md"));
    JobRequest execRequest = startTaken(exec);
    CliProcess.Result running = cli.run("agent", "revise", REPO, exec, "--exec", "true");
    assertEquals(ExitCode.CONFLICT, running.exit(), running.toString());
    assertOneLine(
        running,
        "job "
            + exec
            + " has not finished (it is started): revise it once it has, or cancel it first");
    String proposal = finishWithProposal(exec, execRequest, "hello agent\n");
    long comment = comment(exec, "Greet the owner too");
    comment(exec, "A comment the revision does not address");
    // Taken before any revision is queued: the stand-in takes the queue's next request.
    String llm = bed.createJob(new JsonObject().put("task", "Tidy the README"));
    finishWithProposal(llm, startTaken(llm), "tidy\n");
    comment(llm, "Shorter, please");

    String revision = reviseWithACommentAndANewCommand(cli, exec, comment, proposal);
    finishWithProposal(revision, startTaken(revision), "again\n", proposal);
    showAndListLinkTheRevisions(cli, exec, revision);
    refusesWhatTheGatewayRefuses(cli, llm);
    revisesWithTheTextAlone(cli, llm);
  }

  /** The revision of the exec job, as the command prints it and the gateway records it; its id. */
  private static String reviseWithACommentAndANewCommand(
      CliProcess cli, String exec, long comment, String proposal) throws Exception {
    CliProcess.Result revise =
        cli.run(
            "agent",
            "revise",
            REPO,
            exec,
            "Say hello twice",
            "--comment",
            Long.toString(comment),
            "--exec",
            "echo again >> README.md",
            "--test-command",
            "grep -q again README.md");
    assertEquals(0, revise.exit(), revise.toString());
    Matcher line = CREATED.matcher(revise.out());
    assertTrue(line.find(), revise.toString());
    String revision = line.group(1);
    assertTrue(List.of("queued", "dispatched").contains(line.group(2)), revise.toString());
    assertTrue(
        revise.out().contains("revision 2, revises " + exec + "'s proposal\n"), revise.toString());
    assertTrue(
        revise.out().contains("follow: spbgit agent logs -f demo " + revision), revise.toString());

    JsonObject recorded = bed.job(revision);
    assertEquals(exec, recorded.getString("revises"), recorded.encodePrettily());
    assertEquals(2, recorded.getInteger("revision"));
    assertEquals("proposal", recorded.getString("revises_work"));
    assertEquals(proposal, recorded.getString("base_sha"), "it starts on the proposal");
    assertEquals("echo again >> README.md", recorded.getString("exec"));
    assertEquals("grep -q again README.md", recorded.getString("test_command"));
    JsonObject review = recorded.getJsonObject("review");
    assertEquals("Say hello twice", review.getString("text"));
    assertEquals(new JsonArray().add(comment), review.getJsonArray("comments"));
    assertTrue(recorded.getString("task").contains("Greet the owner too"));
    assertFalse(recorded.getString("task").contains("does not address"), "only --comment's");
    assertEquals(revision, bed.job(exec).getString("revised_by"));
    return revision;
  }

  private static void showAndListLinkTheRevisions(CliProcess cli, String exec, String revision)
      throws Exception {
    CliProcess.Result showRevision = cli.run("agent", "show", REPO, revision);
    assertEquals(0, showRevision.exit(), showRevision.toString());
    // The whole chain's change (what approving brings), then the revision's own.
    String shown = showRevision.out();
    int own = shown.indexOf("this revision alone, on top of " + exec + "'s proposal:\n");
    assertTrue(own > 0, shown);
    assertTrue(shown.substring(0, own).contains("1 file changed, 2 insertions(+)"), shown);
    assertTrue(shown.substring(own).contains("1 file changed, 1 insertion(+)"), shown);
    assertTrue(
        showRevision.out().contains("revision: 2, revises " + exec + "'s proposal\n"),
        showRevision.toString());
    CliProcess.Result showRevised = cli.run("agent", "show", REPO, exec);
    assertEquals(0, showRevised.exit(), showRevised.toString());
    assertTrue(
        showRevised.out().contains("revised:  by " + revision + "\n"), showRevised.toString());
    assertFalse(showRevised.out().contains("revision:"), "the first job revises nothing");
    assertTrue(
        showRevised.out().contains("chain:    r1 " + exec + " finished (ok)  <- this job\n")
            && showRevised.out().contains("chain:    r2 " + revision + " "),
        showRevised.toString());
    CliProcess.Result list = cli.run("agent", "list", REPO);
    assertEquals(0, list.exit(), list.toString());
    assertTrue(
        list.out().lines().anyMatch(l -> l.startsWith(revision) && l.contains("[r2] Greet")),
        list.toString());
  }

  private static void refusesWhatTheGatewayRefuses(CliProcess cli, String llm) throws Exception {
    CliProcess.Result execOnLlm = cli.run("agent", "revise", REPO, llm, "--exec", "true");
    assertEquals(ExitCode.FAILED, execOnLlm.exit(), execOnLlm.toString());
    assertOneLine(
        execOnLlm,
        "job " + llm + " is an llm job: 'exec' and 'test_command' revise exec jobs only");
    CliProcess.Result unknown = cli.run("agent", "revise", REPO, "nosuchjob", "Fix it");
    assertEquals(ExitCode.NOT_FOUND, unknown.exit(), unknown.toString());
    HttpResponse<String> answer =
        bed.gateway.api(
            "POST",
            GatewayOnNats.jobPath("nosuchjob") + "/revise",
            bed.gateway.ownerToken,
            new JsonObject().put("task", "Fix it").encode());
    assertEquals(404, answer.statusCode(), answer.body());
    assertOneLine(unknown, new JsonObject(answer.body()).getString("error"));
    CliProcess.Result both =
        cli.run("agent", "revise", REPO, llm, "x", "--comment", "1", "--no-comments");
    assertEquals(ExitCode.USAGE, both.exit(), both.toString());
    CliProcess.Result nothing = cli.run("agent", "revise", REPO, llm);
    assertEquals(ExitCode.USAGE, nothing.exit(), nothing.toString());
    assertTrue(nothing.err().contains("say what to change"), nothing.toString());
    assertEquals(null, bed.job(llm).getString("revised_by"), "nothing refused was recorded");
  }

  private static void revisesWithTheTextAlone(CliProcess cli, String llm) throws Exception {
    // Without --no-comments the gateway would take the comment on the proposal.
    CliProcess.Result textOnly =
        cli.run("agent", "revise", REPO, llm, "Keep it short", "--no-comments", "--json");
    assertEquals(0, textOnly.exit(), textOnly.toString());
    String llmRevision = new JsonObject(textOnly.out()).getString("id");
    JsonObject llmReview = bed.job(llmRevision).getJsonObject("review");
    assertEquals("Keep it short", llmReview.getString("text"));
    assertEquals(new JsonArray(), llmReview.getJsonArray("comments"));
    assertFalse(bed.job(llmRevision).getString("task").contains("Shorter, please"));
  }

  private static void assertOneLine(CliProcess.Result result, String message) {
    assertEquals(List.of("spbgit: " + message), result.err().strip().lines().toList(), "" + result);
  }

  /** Takes the job from the queue and reports it started, as a runner does. */
  private static JobRequest startTaken(String id) throws Exception {
    JobRequest request = RunnerStandIn.takeRequest(bed.runner);
    assertEquals(id, request.getJobId());
    bed.reportStarted(id, StatusChange.newBuilder());
    return request;
  }

  /** Pushes a proposal with the job's token, reports the job finished ok; the proposal's commit. */
  private static String finishWithProposal(String id, JobRequest request, String line)
      throws Exception {
    return finishWithProposal(id, request, line, "main");
  }

  /** As above, the proposal's commit on {@code from} (a revision's: the work it revises). */
  private static String finishWithProposal(String id, JobRequest request, String line, String from)
      throws Exception {
    bed.git.ok(bed.work, "checkout", "-q", "--detach", from);
    Files.writeString(bed.work.resolve("README.md"), line, StandardOpenOption.APPEND);
    String sha =
        bed.pushProposal(id, "Work of " + id, RunnerStandIn.jobToken(bed.gateway, request));
    bed.reportFinishedOk(id);
    JsonObject job = bed.gateway.awaitFinished(GatewayOnNats.jobPath(id));
    assertEquals(sha, job.getString("proposal_sha"), job.encodePrettily());
    return sha;
  }

  /** A summary comment on the job's proposal; its id. */
  private static long comment(String id, String body) throws Exception {
    HttpResponse<String> response =
        bed.gateway.api(
            "POST",
            GatewayOnNats.jobPath(id) + "/comments",
            bed.gateway.ownerToken,
            new JsonObject().put("body", body).encode());
    assertEquals(201, response.statusCode(), response.body());
    return new JsonObject(response.body()).getLong("id");
  }
}
