package ai.spboucher.spbgit.builtinagent.model;

/** The runner's model proxy answered 429 with error type budget_exceeded. */
public final class BudgetExceededException extends Exception {
  private static final long serialVersionUID = 1L;

  public BudgetExceededException(String message) {
    super(message);
  }
}
