package ai.spboucher.spbgit.cli;

/**
 * The exit codes of {@code spbgit}, documented in {@code docs/cli.md} and in {@code spbgit --help};
 * the one place that turns an HTTP status into one.
 */
public final class ExitCode {

  /**
   * Success; for {@code agent run --follow} and {@code agent logs -f}: the job ended {@code ok}.
   */
  public static final int OK = 0;

  /**
   * The job ended other than {@code ok}, or the gateway refused the request (a 4xx not listed
   * below).
   */
  public static final int FAILED = 1;

  /** Bad arguments or configuration (a missing confirmation included). */
  public static final int USAGE = 2;

  /** Not logged in, or the token was refused (401) or is not allowed to do this (403). */
  public static final int AUTH = 3;

  /** No such repository, job or token (404). */
  public static final int NOT_FOUND = 4;

  /**
   * The request conflicts with the current state (409): already finished, already decided, exists.
   */
  public static final int CONFLICT = 5;

  /** The gateway could not be reached or failed (5xx, connection refused, timeout). */
  public static final int UNAVAILABLE = 6;

  private ExitCode() {}

  /** The exit code for an HTTP error status. */
  public static int forStatus(int status) {
    return switch (status) {
      case 401, 403 -> AUTH;
      case 404 -> NOT_FOUND;
      case 409 -> CONFLICT;
      default -> status >= 500 ? UNAVAILABLE : FAILED;
    };
  }
}
