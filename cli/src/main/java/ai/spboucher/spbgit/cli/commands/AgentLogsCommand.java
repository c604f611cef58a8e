package ai.spboucher.spbgit.cli.commands;

import ai.spboucher.spbgit.cli.ExitCode;
import ai.spboucher.spbgit.cli.api.ApiClient;
import ai.spboucher.spbgit.cli.text.AnsiFilter;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code spbgit agent logs <repo> <job> [-f]}: a job's log so far, or followed live to the end. */
@Command(
    name = "logs",
    aliases = "log",
    description = {
      "Print a job's log. With -f, follow it live until the job ends (resuming after dropped "
          + "connections) and exit 0 only if it ended ok, like 'agent run --follow'.",
      "Colours are kept on a terminal; other escape sequences and control characters are removed."
    })
final class AgentLogsCommand extends JobCommand {

  @Option(
      names = {"-f", "--follow"},
      description = "Follow the live log until the job ends.")
  boolean follow;

  @Override
  int run(ApiClient api) throws InterruptedException {
    if (follow) {
      return JobReport.follow(cli, repo, id);
    }
    String raw = api.getText(path() + "/log");
    if (cli.json()) {
      cli.printJson(ApiClient.JSON.createObjectNode().put("log", raw));
      return ExitCode.OK;
    }
    AnsiFilter filter = new AnsiFilter(cli.keepColours());
    String log = filter.filter(raw) + filter.finish();
    cli.out().print(log);
    if (!log.isEmpty() && !log.endsWith("\n")) {
      cli.out().println();
    }
    cli.out().flush();
    return ExitCode.OK;
  }
}
