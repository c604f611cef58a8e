package ai.spboucher.spbgit.cli.commands;

import ai.spboucher.spbgit.cli.ExitCode;
import ai.spboucher.spbgit.cli.api.ApiClient;
import ai.spboucher.spbgit.cli.text.AnsiFilter;
import com.fasterxml.jackson.databind.JsonNode;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

/** {@code spbgit agent delete-refs <repo> <job> [--yes]}: removes {@code refs/agents/<job>/*}. */
@Command(
    name = "delete-refs",
    description =
        "Delete the job's refs (refs/agents/<job>/*). Asks for confirmation unless --yes; refuses "
            + "(exit 2) when it cannot ask because stdin is not a terminal.")
final class AgentDeleteRefsCommand extends JobCommand {
  @Mixin Confirmation confirmation;

  @Override
  void check() {
    String refs = "refs/agents/" + id + "/*";
    confirmation.ask(
        cli,
        "Delete " + AnsiFilter.plain(refs) + " in " + AnsiFilter.plain(repo) + "?",
        "delete " + refs);
  }

  @Override
  int run(ApiClient api) {
    JsonNode result = api.delete(path() + "/refs");
    if (cli.json()) {
      cli.printJson(result);
      return ExitCode.OK;
    }
    JsonNode deleted = result == null ? null : result.path("deleted");
    if (deleted == null || deleted.isEmpty()) {
      cli.out().println("job " + AnsiFilter.plain(id) + " has no refs left");
    }
    if (deleted != null) {
      deleted.forEach(ref -> cli.out().println("deleted " + AnsiFilter.plain(ref.asText())));
    }
    return ExitCode.OK;
  }
}
