package ai.spboucher.spbgit.cli.commands;

import ai.spboucher.spbgit.cli.CliException;
import ai.spboucher.spbgit.cli.ExitCode;
import ai.spboucher.spbgit.cli.api.ApiClient;
import com.fasterxml.jackson.databind.JsonNode;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/** {@code spbgit agent env <repo>}: the job environment the repository's next job gets. */
@Command(
    name = "env",
    description =
        "Show the job environment of a repository: .spbgit/agent.yml on its default branch, parsed, or "
            + "why it cannot be used (exit 1).")
final class AgentEnvCommand extends ApiCommand {

  @Parameters(index = "0", paramLabel = "<repo>", description = "The repository.")
  String repo;

  @Override
  int run(ApiClient api) {
    JsonNode answer =
        JobReport.requireObject(
            api.get("/api/v1/repos/" + ApiClient.segment(repo) + "/agent-environment"),
            "the environment");
    String error = EnvironmentReport.error(answer);
    if (cli.json()) {
      cli.printJson(answer);
    } else if (error == null) {
      EnvironmentReport.lines(answer).forEach(cli.out()::println);
      cli.out().flush();
    }
    if (error != null) {
      // Jobs are refused with this file (400): the command fails too, so a script can check a push
      // first.
      throw new CliException(ExitCode.FAILED, error);
    }
    return ExitCode.OK;
  }
}
