package ai.spboucher.spbgit.gateway.http;

/** The request conflicts with the current state; maps to 409. */
public final class ConflictException extends RuntimeException {

  private static final long serialVersionUID = 1L;

  public ConflictException(String message) {
    super(message);
  }
}
