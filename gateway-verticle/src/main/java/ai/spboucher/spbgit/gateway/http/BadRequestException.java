package ai.spboucher.spbgit.gateway.http;

/** The request is malformed; maps to 400. */
public final class BadRequestException extends RuntimeException {

  private static final long serialVersionUID = 1L;

  public BadRequestException(String message) {
    super(message);
  }
}
