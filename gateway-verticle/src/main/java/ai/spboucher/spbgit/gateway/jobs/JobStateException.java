package ai.spboucher.spbgit.gateway.jobs;

/**
 * What was asked does not fit the job's state (or its repository's) now: cancelling a finished job,
 * approving one still running or whose proposal moved on; the API answers 409.
 */
public final class JobStateException extends RuntimeException {

  private static final long serialVersionUID = 1L;

  public JobStateException(String message) {
    super(message);
  }
}
