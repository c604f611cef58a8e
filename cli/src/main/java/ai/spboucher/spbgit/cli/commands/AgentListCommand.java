package ai.spboucher.spbgit.cli.commands;

import ai.spboucher.spbgit.cli.api.ApiClient;
import ai.spboucher.spbgit.cli.text.Table;
import com.fasterxml.jackson.databind.JsonNode;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/** {@code spbgit agent list [<repo>]}: jobs, newest first. */
@Command(
    name = "list",
    aliases = "ls",
    description = "List agent jobs, newest first: of one repository, or of all.")
final class AgentListCommand extends ApiCommand {

  private static final int TASK_WIDTH = 60;

  @Parameters(
      index = "0",
      arity = "0..1",
      paramLabel = "<repo>",
      description = "Only this repository's jobs.")
  String repo;

  @Override
  int run(ApiClient api) {
    String path =
        repo == null ? "/api/v1/jobs" : "/api/v1/repos/" + ApiClient.segment(repo) + "/agent-jobs";
    return printTable(
        api.get(path),
        new Table("ID", "REPO", "STATUS", "RESULT", "DECISION", "AGENT", "CREATED", "TASK"),
        AgentListCommand::row);
  }

  private static Object[] row(JsonNode job) {
    return new Object[] {
      job.path("id").asText(),
      job.path("repo").asText(),
      job.path("status").asText(),
      text(job.path("exit_reason")),
      text(job.path("decision").path("decision")),
      agentOf(job),
      text(job.path("created_at")),
      shorten(
          (job.path("revises").isTextual() ? "[r" + job.path("revision").asInt() + "] " : "")
              + job.path("task").asText(""))
    };
  }

  /** An llm job's agent; {@code exec}, or {@code exec+model} with the model endpoint. */
  private static String agentOf(JsonNode job) {
    if ("exec".equals(job.path("mode").asText())) {
      return job.path("exec_model").asBoolean(false) ? "exec+model" : "exec";
    }
    return text(job.path("agent"));
  }

  private static String text(JsonNode node) {
    return node.isTextual() ? node.asText() : null;
  }

  private static String shorten(String task) {
    String line = task.strip().replaceAll("\\s+", " ");
    return line.length() <= TASK_WIDTH ? line : line.substring(0, TASK_WIDTH - 1) + "…";
  }
}
