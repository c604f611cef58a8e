package ai.spboucher.spbgit.gateway.http;

/** A service the request needs is down for now; maps to 503. */
public final class UnavailableException extends RuntimeException {

  private static final long serialVersionUID = 1L;

  public UnavailableException(String message) {
    super(message);
  }
}
