package ai.spboucher.spbgit.cli.commands;

import ai.spboucher.spbgit.cli.Cli;
import ai.spboucher.spbgit.cli.api.ApiClient;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code spbgit agent revise <repo> <job> "<text>"}: starts a revision of a finished job's work
 * with the owner's review, and with {@code --follow} watches it to its end, as {@code agent run}
 * does.
 */
@Command(
    name = "revise",
    mixinStandardHelpOptions = true,
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
final class AgentReviseCommand implements Callable<Integer> {

  private final Cli cli;
  @Mixin JobArguments job;

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

  @Spec CommandSpec spec;

  AgentReviseCommand(Cli cli) {
    this.cli = cli;
  }

  @Override
  public Integer call() throws InterruptedException {
    boolean named = comments != null && !comments.isEmpty();
    if (named && noComments) {
      throw new ParameterException(
          spec.commandLine(), "--comment names the comments to address; --no-comments, none");
    }
    if (text == null && !named && exec == null) {
      throw new ParameterException(
          spec.commandLine(), "say what to change: give <text>, --comment ID or --exec CMD");
    }
    ObjectNode body = ApiClient.JSON.createObjectNode();
    if (text != null) {
      body.put("task", text);
    }
    if (named || noComments) {
      ArrayNode ids = body.putArray("comments");
      if (named) {
        comments.forEach(ids::add);
      }
    }
    if (exec != null) {
      body.put("exec", exec);
    }
    if (testCommand != null) {
      body.put("test_command", testCommand);
    }
    JsonNode created =
        JobReport.requireObject(cli.api().post(job.path() + "/revise", body), "the new revision");
    return JobReport.started(cli, job.repo, created, follow);
  }
}
