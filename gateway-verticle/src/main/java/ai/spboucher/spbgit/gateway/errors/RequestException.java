package ai.spboucher.spbgit.gateway.errors;

/**
 * A request the gateway refuses for a reason the client can read and act on. One subclass per kind
 * of refusal, so that a caller can catch one kind; the message is the {@code error} the API answers
 * with, and {@code http.HttpErrors} maps each kind to its status, in one table. The family has no
 * dependency, so every package can throw it without depending on the HTTP layer.
 */
public abstract sealed class RequestException extends RuntimeException
    permits RequestException.Invalid,
        RequestException.Unauthenticated,
        RequestException.Forbidden,
        RequestException.NotFound,
        RequestException.Conflict,
        RequestException.TooLarge,
        RequestException.Unavailable {

  private RequestException(String message) {
    super(message);
  }

  /**
   * The request breaks a rule whatever the state: a malformed body or parameter, a repository name
   * outside the naming rules, a model not allowed, a base that is not a branch name (400).
   */
  public static final class Invalid extends RequestException {
    public Invalid(String message) {
      super(message);
    }
  }

  /** No credential, or one that does not verify (401). */
  public static final class Unauthenticated extends RequestException {
    public Unauthenticated(String message) {
      super(message);
    }
  }

  /** A verified credential that does not allow the action (403). */
  public static final class Forbidden extends RequestException {
    public Forbidden(String message) {
      super(message);
    }
  }

  /**
   * No such thing: a repository, a job, a job's work (a proposal it never pushed), a token, an
   * endpoint (404).
   */
  public static final class NotFound extends RequestException {
    public NotFound(String message) {
      super(message);
    }
  }

  /**
   * What was asked does not fit the current state: a repository that already exists, cancelling a
   * finished job, approving one still running or whose proposal moved on (409).
   */
  public static final class Conflict extends RequestException {
    public Conflict(String message) {
      super(message);
    }
  }

  /** Part of the request is larger than its bound: a review comment's text (413). */
  public static final class TooLarge extends RequestException {
    public TooLarge(String message) {
      super(message);
    }
  }

  /**
   * A service the request needs is down for now: the job queue, the job log or event store (NATS)
   * (503).
   */
  public static final class Unavailable extends RequestException {
    public Unavailable(String message) {
      super(message);
    }
  }
}
