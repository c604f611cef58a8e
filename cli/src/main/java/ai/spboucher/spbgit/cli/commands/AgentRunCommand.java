package ai.spboucher.spbgit.cli.commands;

import ai.spboucher.spbgit.cli.ExitCode;
import ai.spboucher.spbgit.cli.api.ApiClient;
import ai.spboucher.spbgit.cli.text.AnsiFilter;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code spbgit agent run <repo> "<task>"}: starts a job, and with {@code --follow} watches it to
 * its end.
 */
@Command(
    name = "run",
    description = {
      "Start an agent job on a repository. The job runs in a fresh sandbox on a runner and can only "
          + "push refs/agents/<job>/proposal; nothing is merged until you approve it.",
      "Without --exec it is an llm job: a coding agent (--agent, default the built-in one) works on <task> (the "
          + "gateway refuses it when no model provider is configured). With --exec it runs your shell command "
          + "instead, given the runner's metered model endpoint when you name a --model.",
      "With --follow, stream the live log (resuming after dropped connections), then print the result, the "
          + "review page and the diff stat; the exit code is 0 only if the job ended ok."
    })
final class AgentRunCommand extends ApiCommand {

  /** The gateway's bound on best-of-N attempts. */
  private static final int MAX_ATTEMPTS = 4;

  @Parameters(index = "0", paramLabel = "<repo>", description = "The repository to work on.")
  String repo;

  @Parameters(index = "1", paramLabel = "<task>", description = "What the agent should do.")
  String task;

  @Option(
      names = "--exec",
      paramLabel = "CMD",
      description =
          "Shell command the job runs in the repository's work tree instead of the model-driven "
              + "agent (exec mode).")
  String exec;

  @Option(
      names = "--test",
      paramLabel = "CMD",
      description = "Test command run after CMD; the job is ok only if it passes.")
  String test;

  @Option(
      names = "--base",
      paramLabel = "BRANCH",
      description = "Branch to start from (default: main).")
  String base;

  @Option(
      names = "--model",
      paramLabel = "M",
      description =
          "Model of an llm job (sent as 'model'): one the gateway allows (SPB_MODELS); default: "
              + "the gateway's default (SPB_MODEL). With --exec: the command gets the runner's "
              + "model endpoint for this model (SPB_MODEL_BASE_URL), metered and budgeted.")
  String model;

  @Option(
      names = "--agent",
      paramLabel = "AGENT",
      description =
          "Coding agent of an llm job (sent as 'agent'): builtin (default), claude-code, codex or "
              + "qwen-code; the gateway refuses other names. Not with --exec.")
  String agent;

  @Option(
      names = "--attempts",
      paramLabel = "N",
      description =
          "Best-of-N: start N sibling jobs (1 to 4, default 1) with the same task, base and "
              + "environment, each an ordinary job with its own token and proposal; compare them on "
              + "the group page and approve one (the others become superseded). Not with --follow.")
  Integer attempts;

  @Option(
      names = {"-f", "--follow"},
      description = "Stream the log until the job ends; exit 0 only if it is ok.")
  boolean follow;

  @Override
  void check() {
    if (agent != null && exec != null) {
      throw usage(
          "--agent applies to llm jobs only; drop it or --exec (an exec job gets the model "
              + "endpoint with --model)");
    }
    if (attempts != null && (attempts < 1 || attempts > MAX_ATTEMPTS)) {
      throw usage("--attempts must be 1 to " + MAX_ATTEMPTS + ", not " + attempts);
    }
    if (isGroup() && follow) {
      throw usage(
          "--follow follows one job; with --attempts, follow each with spbgit agent logs -f");
    }
  }

  @Override
  int run(ApiClient api) throws InterruptedException {
    boolean group = isGroup();
    ObjectNode body = ApiClient.JSON.createObjectNode().put("task", task);
    if (group) {
      body.put("attempts", attempts);
    }
    putIfSet(body, "exec", exec);
    putIfSet(body, "test_command", test);
    putIfSet(body, "base", base);
    putIfSet(body, "model", model);
    putIfSet(body, "agent", agent);
    JsonNode job =
        JobReport.requireObject(
            api.post("/api/v1/repos/" + ApiClient.segment(repo) + "/agent-jobs", body),
            group ? "the new group" : "the new job");
    if (group) {
      return printGroup(api, job);
    }
    return JobReport.started(cli, repo, job, follow);
  }

  /** The group's id and page, then one line per attempt with where to follow it. */
  private int printGroup(ApiClient api, JsonNode created) {
    if (cli.json()) {
      cli.printJson(created);
      return ExitCode.OK;
    }
    String group = AnsiFilter.plain(created.path("group").asText());
    cli.out().println("group " + group + " (" + created.path("jobs").size() + " attempts)");
    cli.out().println("compare: " + api.groupPageUrl(repo, group));
    for (JsonNode id : created.path("jobs")) {
      String job = AnsiFilter.plain(id.asText());
      cli.out().println("job " + job + "  follow: spbgit agent logs -f " + repo + " " + job);
    }
    return ExitCode.OK;
  }

  /** Best-of-N: more than one attempt. */
  private boolean isGroup() {
    return attempts != null && attempts > 1;
  }
}
