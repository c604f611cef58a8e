package ai.spboucher.spbgit.cli.commands;

import ai.spboucher.spbgit.cli.api.ApiClient;
import ai.spboucher.spbgit.cli.text.AnsiFilter;
import com.fasterxml.jackson.databind.JsonNode;
import picocli.CommandLine.Command;

/** {@code spbgit agent cancel <repo> <job>}: stops a job that has not finished. */
@Command(
    name = "cancel",
    description =
        "Cancel a job that has not finished (exit 5 if it already has). A queued job ends at once; a "
            + "running one ends when its runner has stopped the container.")
final class AgentCancelCommand extends JobCommand {

  @Override
  int run(ApiClient api) {
    JsonNode cancelled = api.post(path() + "/cancel", null);
    return print(
        cancelled,
        () ->
            "cancel requested for job "
                + AnsiFilter.plain(id)
                + " (now "
                + JobReport.statusLine(cancelled)
                + ")");
  }
}
