package ai.spboucher.spbgit.cli.commands;

import ai.spboucher.spbgit.cli.Cli;
import ai.spboucher.spbgit.cli.ExitCode;
import ai.spboucher.spbgit.cli.api.ApiClient;
import ai.spboucher.spbgit.cli.text.AnsiFilter;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code spbgit agent run <repo> "<task>"}: starts a job, and with {@code --follow} watches it to
 * its end.
 */
@Command(
    name = "run",
    mixinStandardHelpOptions = true,
    description = {
      "Start an agent job on a repository. The job runs in a fresh sandbox on a runner and can only "
          + "push refs/agents/<job>/proposal; nothing is merged until you approve it.",
      "Without --exec it is an llm job: a coding agent (--agent, default the built-in one) works on <task> (the "
          + "gateway refuses it when no model provider is configured). With --exec it runs your shell command "
          + "instead, given the runner's metered model endpoint when you name a --model.",
      "With --follow, stream the live log (resuming after dropped connections), then print the result, the "
          + "review page and the diff stat; the exit code is 0 only if the job ended ok."
    })
final class AgentRunCommand implements Callable<Integer> {

  private final Cli cli;

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
      names = {"-f", "--follow"},
      description = "Stream the log until the job ends; exit 0 only if it is ok.")
  boolean follow;

  AgentRunCommand(Cli cli) {
    this.cli = cli;
  }

  @Spec CommandSpec spec;

  @Override
  public Integer call() throws InterruptedException {
    if (agent != null && exec != null) {
      throw new ParameterException(
          spec.commandLine(),
          "--agent applies to llm jobs only; drop it or --exec (an exec job gets the model "
              + "endpoint with --model)");
    }
    ObjectNode body = ApiClient.JSON.createObjectNode().put("task", task);
    putIfSet(body, "exec", exec);
    putIfSet(body, "test_command", test);
    putIfSet(body, "base", base);
    putIfSet(body, "model", model);
    putIfSet(body, "agent", agent);
    JsonNode job =
        JobReport.requireObject(
            cli.api().post("/api/v1/repos/" + ApiClient.segment(repo) + "/agent-jobs", body),
            "the new job");
    String id = job.path("id").asText();
    if (follow) {
      cli.err()
          .println(
              "job "
                  + AnsiFilter.plain(id)
                  + " "
                  + AnsiFilter.plain(job.path("status").asText())
                  + "; following its log (Ctrl-C stops following, not the job)");
      cli.err().flush();
      return JobReport.follow(cli, repo, id);
    }
    if (cli.json()) {
      cli.printJson(job);
    } else {
      cli.out()
          .println(
              "job " + AnsiFilter.plain(id) + " " + AnsiFilter.plain(job.path("status").asText()));
      cli.out().println("review: " + cli.api().jobPageUrl(repo, id));
      cli.out().println("follow: spbgit agent logs -f " + repo + " " + AnsiFilter.plain(id));
    }
    return ExitCode.OK;
  }

  private static void putIfSet(ObjectNode body, String field, String value) {
    if (value != null) {
      body.put(field, value);
    }
  }
}
