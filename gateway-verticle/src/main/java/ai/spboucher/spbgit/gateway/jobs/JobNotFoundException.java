package ai.spboucher.spbgit.gateway.jobs;

/** No such job, or no such work of a job (a proposal it never pushed); the API answers 404. */
public final class JobNotFoundException extends RuntimeException {

  private static final long serialVersionUID = 1L;

  public JobNotFoundException(String message) {
    super(message);
  }
}
