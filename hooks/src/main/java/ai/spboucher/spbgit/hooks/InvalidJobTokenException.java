package ai.spboucher.spbgit.hooks;

/**
 * A job token was refused. The message is safe to show to the client: it never echoes the token.
 */
public final class InvalidJobTokenException extends Exception {

  private static final long serialVersionUID = 1L;

  public InvalidJobTokenException(String message) {
    super(message);
  }
}
