package ai.spboucher.spbgit.runner.model;

import java.util.concurrent.CompletableFuture;

/**
 * One job's model spend against its token budget (input plus output tokens). The budget is
 * exhausted once the spend reaches it; {@link #exhaustion()} completes at that moment, once.
 *
 * <p>Threading: every method is thread-safe. {@link #exhaustion()}'s dependants run on the thread
 * whose {@link #add} exhausted the budget (a model endpoint worker): they must not block.
 */
public final class TokenMeter {

  private final long budget;
  private final CompletableFuture<Usage> exhaustion = new CompletableFuture<>();
  private Usage spent = Usage.NONE;

  public TokenMeter(long budget) {
    if (budget < 1) {
      throw new IllegalArgumentException("the token budget must be at least 1");
    }
    this.budget = budget;
  }

  public long budget() {
    return budget;
  }

  /** Adds one call's usage; completes {@link #exhaustion()} if this call reached the budget. */
  public void add(Usage usage) {
    Usage now;
    synchronized (this) {
      spent = spent.plus(usage);
      now = spent;
    }
    if (now.total() >= budget) {
      exhaustion.complete(now);
    }
  }

  public synchronized Usage spent() {
    return spent;
  }

  public synchronized boolean exhausted() {
    return spent.total() >= budget;
  }

  /** Completes, with the spend at that moment, when the spend first reaches the budget. */
  public CompletableFuture<Usage> exhaustion() {
    return exhaustion.copy();
  }
}
