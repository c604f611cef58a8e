package ai.spboucher.spbgit.gateway.jobs;

/**
 * A job request the gateway refuses whatever the state: a model not allowed, a base that is not a
 * branch name; the API answers 400.
 */
public final class InvalidJobException extends RuntimeException {

  private static final long serialVersionUID = 1L;

  public InvalidJobException(String message) {
    super(message);
  }
}
