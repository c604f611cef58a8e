package ai.spboucher.spbgit.cli.commands;

import ai.spboucher.spbgit.cli.CliException;
import ai.spboucher.spbgit.cli.ExitCode;
import ai.spboucher.spbgit.cli.api.ApiClient;
import ai.spboucher.spbgit.cli.text.AnsiFilter;
import com.fasterxml.jackson.databind.JsonNode;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code spbgit agent approve <repo> <job>}: fast-forwards a branch to the job's proposal. */
@Command(
    name = "approve",
    description = {
      "Approve a finished job: fast-forward (or create) a branch to its proposal commit.",
      "The commit is the job's current proposal_sha unless --sha pins the one you reviewed; the gateway refuses "
          + "(exit 5) if the proposal moved, or if the branch has commits the proposal lacks."
    })
final class AgentApproveCommand extends JobCommand {

  @Option(
      names = "--branch",
      paramLabel = "B",
      description = "Branch to update (default: agent/<job>).")
  String branch;

  @Option(names = "--sha", paramLabel = "SHA", description = "The proposal commit you reviewed.")
  String sha;

  @Override
  int run(ApiClient api) {
    String target = branch != null ? branch : "agent/" + id;
    String commit = sha != null ? sha : currentProposal(api);
    JsonNode approved =
        api.post(
            path() + "/approve",
            ApiClient.JSON.createObjectNode().put("branch", target).put("sha", commit));
    return print(
        approved,
        () ->
            "approved job "
                + AnsiFilter.plain(id)
                + ": "
                + AnsiFilter.plain(target)
                + " is at "
                + AnsiFilter.plain(commit));
  }

  private String currentProposal(ApiClient api) {
    JsonNode current = JobReport.requireObject(api.get(path()), "the job");
    if (!current.path("proposal_sha").isTextual()) {
      throw new CliException(
          ExitCode.CONFLICT,
          "job "
              + id
              + " has no proposal to approve ("
              + JobReport.statusLine(current)
              + ")"
              + (current.path("partial_sha").isTextual()
                  ? "; its partial work is for review only"
                  : ""));
    }
    return current.path("proposal_sha").asText();
  }
}
