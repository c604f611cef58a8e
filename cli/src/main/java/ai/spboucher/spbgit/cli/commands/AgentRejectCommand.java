package ai.spboucher.spbgit.cli.commands;

import ai.spboucher.spbgit.cli.api.ApiClient;
import ai.spboucher.spbgit.cli.text.AnsiFilter;
import picocli.CommandLine.Command;

/** {@code spbgit agent reject <repo> <job>}: records that the proposal is not wanted. */
@Command(
    name = "reject",
    description =
        "Reject a job's proposal (recorded in the audit log; its refs stay until 'delete-refs').")
final class AgentRejectCommand extends JobCommand {

  @Override
  int run(ApiClient api) {
    return print(api.post(path() + "/reject", null), () -> "rejected job " + AnsiFilter.plain(id));
  }
}
