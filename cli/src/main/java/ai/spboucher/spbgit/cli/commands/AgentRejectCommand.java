package ai.spboucher.spbgit.cli.commands;

import ai.spboucher.spbgit.cli.Cli;
import ai.spboucher.spbgit.cli.text.AnsiFilter;
import com.fasterxml.jackson.databind.JsonNode;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

/** {@code spbgit agent reject <repo> <job>}: records that the proposal is not wanted. */
@Command(
    name = "reject",
    mixinStandardHelpOptions = true,
    description =
        "Reject a job's proposal (recorded in the audit log; its refs stay until 'delete-refs').")
final class AgentRejectCommand implements Runnable {

  private final Cli cli;
  @Mixin JobArguments job;

  AgentRejectCommand(Cli cli) {
    this.cli = cli;
  }

  @Override
  public void run() {
    JsonNode rejected = cli.api().post(job.path() + "/reject", null);
    if (cli.json()) {
      cli.printJson(rejected);
    } else {
      cli.out().println("rejected job " + AnsiFilter.plain(job.id));
    }
  }
}
