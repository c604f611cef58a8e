package ai.spboucher.spbgit.cli.commands;

import ai.spboucher.spbgit.cli.api.ApiClient;
import picocli.CommandLine.Parameters;

/** A command on one job, named by its {@code <repo> <job>} pair. */
abstract class JobCommand extends ApiCommand {

  @Parameters(index = "0", paramLabel = "<repo>", description = "The repository.")
  String repo;

  @Parameters(index = "1", paramLabel = "<job>", description = "The job id.")
  String id;

  /** The job's API path. */
  String path() {
    return ApiClient.jobPath(repo, id);
  }
}
