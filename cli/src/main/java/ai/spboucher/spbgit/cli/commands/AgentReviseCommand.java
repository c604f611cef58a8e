package ai.spboucher.spbgit.cli.commands;

import ai.spboucher.spbgit.cli.api.ApiClient;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code spbgit agent revise <repo> <job> "<text>"}: starts a revision of a finished job's work
 * with the owner's review, and with {@code --follow} watches it to its end, as {@code agent run}
 * does.
 */
@Command(
    name = "revise",
    description = {
      "Start a revision of a finished job: a new job on its proposal (or, without one, its partial "
          + "work) with the same agent, model, test command and environment, whose task is the "
          + "job's task followed by your review: <text> and the review comments (all those on the "
          + "work revised, unless --comment names some or --no-comments none).",
      "An exec job is revised with a new --exec command (and optionally --test-command); an llm "
          + "job refuses them (exit 1). <text> may be left out with --comment or --exec.",
      "The gateway refuses a job that is still running, left no work or whose revision already "
          + "has work (revise that one; exit 5), and an unknown comment (exit 1). Prints the new "
          + "job as agent run does; with --follow, its log to the end (exit 0 only if ok)."
    })
final class AgentReviseCommand extends JobCommand {

  @Parameters(
      index = "2",
      arity = "0..1",
      paramLabel = "<text>",
      description = "What to change (sent as 'task').")
  String text;

  @Option(
      names = "--comment",
      paramLabel = "ID",
      description =
          "A review comment of the job to address (repeatable); without any, every comment on "
              + "the work revised.")
  List<Long> comments;

  @Option(names = "--no-comments", description = "Address no review comments, only <text>.")
  boolean noComments;

  @Option(
      names = "--exec",
      paramLabel = "CMD",
      description = "The command the revision of an exec job runs.")
  String exec;

  @Option(
      names = "--test-command",
      paramLabel = "CMD",
      description = "The test command of an exec job's revision (default: the job's).")
  String testCommand;

  @Option(
      names = {"-f", "--follow"},
      description = "Stream the revision's log until it ends; exit 0 only if it is ok.")
  boolean follow;

  @Override
  void check() {
    if (namesComments() && noComments) {
      throw usage("--comment names the comments to address; --no-comments, none");
    }
    if (text == null && !namesComments() && exec == null) {
      throw usage("say what to change: give <text>, --comment ID or --exec CMD");
    }
  }

  @Override
  int run(ApiClient api) throws InterruptedException {
    ObjectNode body = ApiClient.JSON.createObjectNode();
    if (text != null) {
      body.put("task", text);
    }
    if (namesComments() || noComments) {
      ArrayNode ids = body.putArray("comments");
      if (namesComments()) {
        comments.forEach(ids::add);
      }
    }
    putIfSet(body, "exec", exec);
    putIfSet(body, "test_command", testCommand);
    JsonNode created =
        JobReport.requireObject(api.post(path() + "/revise", body), "the new revision");
    return JobReport.started(cli, repo, created, follow);
  }

  private boolean namesComments() {
    return comments != null && !comments.isEmpty();
  }
}
