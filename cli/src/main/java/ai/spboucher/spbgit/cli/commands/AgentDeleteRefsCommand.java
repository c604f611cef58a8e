package ai.spboucher.spbgit.cli.commands;

import ai.spboucher.spbgit.cli.Cli;
import ai.spboucher.spbgit.cli.text.AnsiFilter;
import com.fasterxml.jackson.databind.JsonNode;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code spbgit agent delete-refs <repo> <job> [--yes]}: removes {@code refs/agents/<job>/*}. */
@Command(
    name = "delete-refs",
    mixinStandardHelpOptions = true,
    description =
        "Delete the job's refs (refs/agents/<job>/*). Asks for confirmation unless --yes; refuses "
            + "(exit 2) when it cannot ask because stdin is not a terminal.")
final class AgentDeleteRefsCommand implements Runnable {

  private final Cli cli;
  @Mixin JobArguments job;

  @Option(
      names = {"-y", "--yes"},
      description = "Do not ask for confirmation.")
  boolean yes;

  AgentDeleteRefsCommand(Cli cli) {
    this.cli = cli;
  }

  @Override
  public void run() {
    String refs = "refs/agents/" + job.id + "/*";
    if (!yes) {
      cli.confirm(
          "Delete " + AnsiFilter.plain(refs) + " in " + AnsiFilter.plain(job.repo) + "?",
          "delete " + refs);
    }
    JsonNode result = cli.api().delete(job.path() + "/refs");
    if (cli.json()) {
      cli.printJson(result);
      return;
    }
    JsonNode deleted = result == null ? null : result.path("deleted");
    if (deleted == null || deleted.isEmpty()) {
      cli.out().println("job " + AnsiFilter.plain(job.id) + " has no refs left");
    }
    if (deleted != null) {
      deleted.forEach(ref -> cli.out().println("deleted " + AnsiFilter.plain(ref.asText())));
    }
  }
}
