package ai.spboucher.spbgit.gateway.http;

/** No such resource; maps to 404. */
public final class NotFoundException extends RuntimeException {

  private static final long serialVersionUID = 1L;

  public NotFoundException(String message) {
    super(message);
  }
}
