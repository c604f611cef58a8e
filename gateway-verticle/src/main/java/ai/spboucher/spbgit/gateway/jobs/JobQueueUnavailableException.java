package ai.spboucher.spbgit.gateway.jobs;

/** The job queue (NATS) cannot take or cancel a job now; the API answers 503. */
public final class JobQueueUnavailableException extends RuntimeException {

  private static final long serialVersionUID = 1L;

  public JobQueueUnavailableException(String message) {
    super(message);
  }
}
