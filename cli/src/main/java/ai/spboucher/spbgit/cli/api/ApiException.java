package ai.spboucher.spbgit.cli.api;

import ai.spboucher.spbgit.cli.CliException;
import ai.spboucher.spbgit.cli.ExitCode;

/** The gateway answered with an error status; the exit code follows from the status. */
public final class ApiException extends CliException {

  private final int status;

  public ApiException(int status, String message) {
    super(ExitCode.forStatus(status), message);
    this.status = status;
  }

  public int status() {
    return status;
  }
}
