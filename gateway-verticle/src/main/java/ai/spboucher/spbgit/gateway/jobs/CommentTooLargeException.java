package ai.spboucher.spbgit.gateway.jobs;

/**
 * A review comment's text is longer than {@link NewComment#MAX_BODY_BYTES}; the API answers 413.
 */
public final class CommentTooLargeException extends RuntimeException {

  private static final long serialVersionUID = 1L;

  public CommentTooLargeException(String message) {
    super(message);
  }
}
