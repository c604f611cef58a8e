package ai.spboucher.spbgit.gateway.auth;

/** No credential, or one that does not verify; maps to 401. */
public final class UnauthenticatedException extends RuntimeException {

  private static final long serialVersionUID = 1L;

  public UnauthenticatedException(String message) {
    super(message);
  }
}
