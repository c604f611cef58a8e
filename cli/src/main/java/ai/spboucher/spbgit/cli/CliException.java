package ai.spboucher.spbgit.cli;

/** A failure the user sees as one line ({@code spbgit: <message>}) and an {@link ExitCode}. */
public class CliException extends RuntimeException {

  private final int exitCode;

  public CliException(int exitCode, String message) {
    super(message);
    this.exitCode = exitCode;
  }

  public CliException(int exitCode, String message, Throwable cause) {
    super(message, cause);
    this.exitCode = exitCode;
  }

  public int exitCode() {
    return exitCode;
  }
}
