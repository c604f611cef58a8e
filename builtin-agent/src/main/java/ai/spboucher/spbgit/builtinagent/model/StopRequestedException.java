package ai.spboucher.spbgit.builtinagent.model;

/** The runner's breach file appeared while a request or a retry wait was in progress. */
public final class StopRequestedException extends Exception {
  private static final long serialVersionUID = 1L;
  private final String reason;

  public StopRequestedException(String reason) {
    super("the runner signalled " + reason);
    this.reason = reason;
  }

  public String reason() {
    return reason;
  }
}
