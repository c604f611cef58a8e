package ai.spboucher.spbgit.cli.commands;

import ai.spboucher.spbgit.cli.api.ApiClient;
import picocli.CommandLine.Parameters;

/** The {@code <repo> <job>} pair that names one job (a picocli mixin). */
final class JobArguments {

  @Parameters(index = "0", paramLabel = "<repo>", description = "The repository.")
  String repo;

  @Parameters(index = "1", paramLabel = "<job>", description = "The job id.")
  String id;

  /** The job's API path. */
  String path() {
    return ApiClient.jobPath(repo, id);
  }
}
