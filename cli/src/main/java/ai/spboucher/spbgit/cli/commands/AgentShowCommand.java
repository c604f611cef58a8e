package ai.spboucher.spbgit.cli.commands;

import ai.spboucher.spbgit.cli.Cli;
import ai.spboucher.spbgit.cli.text.AnsiFilter;
import com.fasterxml.jackson.databind.JsonNode;
import java.io.PrintWriter;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

/** {@code spbgit agent show <repo> <job>}: one job's state, decision and proposal. */
@Command(
    name = "show",
    mixinStandardHelpOptions = true,
    description =
        "Show a job: status, commands, its place in a chain of revisions, runner, timestamps, decision,"
            + " review comments, and its proposal's diff stat.")
final class AgentShowCommand implements Runnable {

  private final Cli cli;
  @Mixin JobArguments job;

  AgentShowCommand(Cli cli) {
    this.cli = cli;
  }

  @Override
  public void run() {
    JsonNode node = JobReport.requireObject(cli.api().get(job.path()), "the job");
    if (cli.json()) {
      cli.printJson(node);
      return;
    }
    PrintWriter out = cli.out();
    field(out, "repo", node.path("repo"));
    field(out, "task", node.path("task"));
    if (node.path("revises").isTextual()) {
      field(out, "revision", JobReport.revisionLink(node));
    }
    if (node.path("revised_by").isTextual()) {
      field(out, "revised", "by " + node.path("revised_by").asText());
    }
    for (JsonNode revision : node.path("revisions")) {
      JsonNode decision = revision.path("decision");
      field(
          out,
          "chain",
          "r"
              + revision.path("revision").asInt()
              + " "
              + revision.path("id").asText()
              + " "
              + revision.path("status").asText("?")
              + (revision.path("exit_reason").isTextual()
                  ? " (" + revision.path("exit_reason").asText() + ")"
                  : "")
              + (decision.isObject() ? " " + decision.path("decision").asText() : "")
              + (revision.path("id").asText().equals(node.path("id").asText())
                  ? "  <- this job"
                  : ""));
    }
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
    JsonNode decision = node.path("decision");
    if (decision.isObject()) {
      field(
          out,
          "decision",
          decision.path("decision").asText()
              + ("approved".equals(decision.path("decision").asText())
                  ? " onto "
                      + decision.path("branch").asText()
                      + " at "
                      + decision.path("sha").asText()
                  : "")
              + " ("
              + decision.path("at").asText("?")
              + ")");
    }
    for (JsonNode comment : cli.api().get(job.path() + "/comments")) {
      field(
          out,
          "comment",
          AgentCommentCommand.placeOf(comment)
              + (comment.path("outdated").asBoolean(false) ? " [outdated]" : "")
              + ": "
              + comment.path("body").asText(""));
    }
    JobReport.printOutcome(cli, node);
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
