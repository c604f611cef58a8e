package ai.spboucher.spbgit.cli.commands;

import ai.spboucher.spbgit.cli.ExitCode;
import ai.spboucher.spbgit.cli.api.ApiClient;
import ai.spboucher.spbgit.cli.text.AnsiFilter;
import com.fasterxml.jackson.databind.JsonNode;
import java.io.PrintWriter;
import picocli.CommandLine.Command;

/** {@code spbgit agent show <repo> <job>}: one job's state, decision and proposal. */
@Command(
    name = "show",
    description =
        "Show a job: status, commands, its place in a chain of revisions, runner, timestamps, decision,"
            + " review comments, and its proposal's diff stat.")
final class AgentShowCommand extends JobCommand {

  @Override
  int run(ApiClient api) {
    JsonNode node = JobReport.requireObject(api.get(path()), "the job");
    if (cli.json()) {
      cli.printJson(node);
      return ExitCode.OK;
    }
    PrintWriter out = cli.out();
    printTaskAndChain(out, node);
    printCommands(out, node);
    printRun(out, node);
    JsonNode decision = node.path("decision");
    if (decision.isObject()) {
      field(out, "decision", decisionLine(decision));
    }
    for (JsonNode comment : api.get(path() + "/comments")) {
      field(
          out,
          "comment",
          AgentCommentCommand.placeOf(comment)
              + (comment.path("outdated").asBoolean(false) ? " [outdated]" : "")
              + ": "
              + comment.path("body").asText(""));
    }
    JobReport.printOutcome(cli, node);
    return ExitCode.OK;
  }

  /** The repository and task, and where the job stands in a chain of revisions. */
  private static void printTaskAndChain(PrintWriter out, JsonNode node) {
    field(out, "repo", node.path("repo"));
    field(out, "task", node.path("task"));
    if (node.path("revises").isTextual()) {
      field(out, "revision", JobReport.revisionLink(node));
    }
    if (node.path("revised_by").isTextual()) {
      field(out, "revised", "by " + node.path("revised_by").asText());
    }
    for (JsonNode revision : node.path("revisions")) {
      field(out, "chain", chainLine(revision, node.path("id").asText()));
    }
  }

  /** What the job runs, and on what. */
  private static void printCommands(PrintWriter out, JsonNode node) {
    field(out, "mode", node.path("mode"));
    field(out, "model", node.path("model"));
    String agent = agentOf(node);
    if (!agent.isEmpty()) {
      field(out, "agent", agent);
    }
    field(out, "exec", node.path("exec"));
    field(out, "test", node.path("test_command"));
    field(out, "base", node.path("base").asText("") + " at " + node.path("base_sha").asText("?"));
    field(out, "env", EnvironmentReport.summary(node));
  }

  /** Where and when it ran, what it spent and what it pushed. */
  private static void printRun(PrintWriter out, JsonNode node) {
    field(out, "waiting", node.path("waiting_for"));
    field(
        out,
        "runner",
        node.path("runner_id").asText("-")
            + " (container "
            + node.path("container_id").asText("-")
            + ")");
    field(out, "created", node.path("created_at"));
    field(out, "started", node.path("started_at"));
    field(out, "finished", node.path("finished_at"));
    JsonNode spend = node.path("spend");
    if (spend.isObject()) {
      field(
          out,
          "spend",
          spend.path("input_tokens").asLong()
              + " input + "
              + spend.path("output_tokens").asLong()
              + " output tokens ("
              + spend.path("provider").asText("?")
              + " "
              + spend.path("model").asText("?")
              + ")");
    }
    for (JsonNode ref : node.path("refs_written")) {
      field(out, "pushed", ref.path("ref").asText() + " " + ref.path("new").asText(""));
    }
  }

  /** {@code r1 <job> finished (ok) approved <- this job}: one job of the chain. */
  private static String chainLine(JsonNode revision, String thisJob) {
    JsonNode decision = revision.path("decision");
    return "r"
        + revision.path("revision").asInt()
        + " "
        + revision.path("id").asText()
        + " "
        + revision.path("status").asText("?")
        + (revision.path("exit_reason").isTextual()
            ? " (" + revision.path("exit_reason").asText() + ")"
            : "")
        + (decision.isObject() ? " " + decision.path("decision").asText() : "")
        + (revision.path("id").asText().equals(thisJob) ? "  <- this job" : "");
  }

  /** {@code approved onto <branch> at <sha> (<when>)}; any other decision and when. */
  private static String decisionLine(JsonNode decision) {
    return decision.path("decision").asText()
        + ("approved".equals(decision.path("decision").asText())
            ? " onto " + decision.path("branch").asText() + " at " + decision.path("sha").asText()
            : "")
        + " ("
        + decision.path("at").asText("?")
        + ")";
  }

  /**
   * An llm job's agent and its version (the runner's once started, else the pinned one), or that an
   * exec job has the model endpoint; empty when neither.
   */
  private static String agentOf(JsonNode job) {
    if (job.path("exec_model").asBoolean(false)) {
      return "exec command with the model endpoint";
    }
    String agent = job.path("agent").asText("");
    String version = job.path("agent_version").asText("");
    return agent.isEmpty() || version.isEmpty() ? agent : agent + " " + version;
  }

  private static void field(PrintWriter out, String name, JsonNode value) {
    if (value.isTextual() && !value.asText().isEmpty()) {
      field(out, name, value.asText());
    }
  }

  private static void field(PrintWriter out, String name, String value) {
    out.printf("%-9s %s%n", name + ":", AnsiFilter.plain(value));
  }
}
