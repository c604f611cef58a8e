package ai.spboucher.spbgit.cli.commands;

import ai.spboucher.spbgit.cli.Cli;
import ai.spboucher.spbgit.cli.text.AnsiFilter;
import com.fasterxml.jackson.databind.JsonNode;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

/** {@code spbgit agent cancel <repo> <job>}: stops a job that has not finished. */
@Command(
    name = "cancel",
    mixinStandardHelpOptions = true,
    description =
        "Cancel a job that has not finished (exit 5 if it already has). A queued job ends at once; a "
            + "running one ends when its runner has stopped the container.")
final class AgentCancelCommand implements Runnable {

  private final Cli cli;
  @Mixin JobArguments job;

  AgentCancelCommand(Cli cli) {
    this.cli = cli;
  }

  @Override
  public void run() {
    JsonNode cancelled = cli.api().post(job.path() + "/cancel", null);
    if (cli.json()) {
      cli.printJson(cancelled);
    } else {
      cli.out()
          .println(
              "cancel requested for job "
                  + AnsiFilter.plain(job.id)
                  + " (now "
                  + JobReport.statusLine(cancelled)
                  + ")");
    }
  }
}
