package ai.spboucher.spbgit.cli.commands;

import ai.spboucher.spbgit.cli.api.ApiClient;
import ai.spboucher.spbgit.cli.text.AnsiFilter;
import com.fasterxml.jackson.databind.JsonNode;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

/** {@code spbgit agent cancel <repo> <job>}: stops a job that has not finished. */
@Command(
    name = "cancel",
    description =
        "Cancel a job that has not finished (exit 5 if it already has). A queued job ends at once; a "
            + "running one ends when its runner has stopped the container.")
final class AgentCancelCommand extends ApiCommand {

  @Mixin JobArguments job;

  @Override
  int run(ApiClient api) {
    JsonNode cancelled = api.post(job.path() + "/cancel", null);
    return print(
        cancelled,
        () ->
            "cancel requested for job "
                + AnsiFilter.plain(job.id)
                + " (now "
                + JobReport.statusLine(cancelled)
                + ")");
  }
}
