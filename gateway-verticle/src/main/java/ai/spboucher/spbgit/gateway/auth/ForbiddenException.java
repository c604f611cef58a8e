package ai.spboucher.spbgit.gateway.auth;

/** A verified credential that does not allow the action; maps to 403. */
public final class ForbiddenException extends RuntimeException {

  private static final long serialVersionUID = 1L;

  public ForbiddenException(String message) {
    super(message);
  }
}
