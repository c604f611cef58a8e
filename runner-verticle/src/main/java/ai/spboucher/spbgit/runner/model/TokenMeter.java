package ai.spboucher.spbgit.runner.model;

import java.util.concurrent.CompletableFuture;

/**
 * One job's model spend against its token budget (input plus output tokens). The budget is
 * exhausted once the spend reaches it, or once the endpoint cut a stream that would have passed it
 * ({@link #cutOff()}); {@link #exhaustion()} completes at that moment, once.
 *
 * <p>Calls in flight hold a {@link Claim}: their estimated usage so far, which counts against the
 * budget until the call settles with its usage. The endpoint cuts a stream once the spend plus
 * every claim passes the budget ({@link Claim#update}), so a job overshoots by at most what its
 * calls in flight add after the crossing: one event each for streams, a whole answer for a call
 * that is not streamed.
 *
 * <p>Threading: every method is thread-safe. {@link #exhaustion()}'s dependants run on the thread
 * that exhausted the budget (a model endpoint's event loop): they must not block.
 */
public final class TokenMeter {

  private final long budget;
  private final CompletableFuture<Usage> exhaustion = new CompletableFuture<>();
  private Usage spent = Usage.NONE;
  private long claimed;
  private boolean cut;

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

  /** The estimated usage of the calls in flight. */
  public synchronized long claimed() {
    return claimed;
  }

  public synchronized boolean exhausted() {
    return cut || spent.total() >= budget;
  }

  /**
   * Exhausts the budget although the spend has not reached it: a stream was cut because the spend
   * and the claims of the calls in flight passed it.
   */
  public void cutOff() {
    Usage now;
    synchronized (this) {
      cut = true;
      now = spent;
    }
    exhaustion.complete(now);
  }

  /** Completes, with the spend at that moment, when the budget is first exhausted. */
  public CompletableFuture<Usage> exhaustion() {
    return exhaustion.copy();
  }

  /** A claim for a call about to be sent, of {@code estimate} tokens so far. */
  public Claim claim(long estimate) {
    Claim claim = new Claim();
    claim.update(estimate);
    return claim;
  }

  /** One call's estimated usage while it is in flight. */
  public final class Claim {

    private long estimate;
    private boolean settled;
    private Usage counted;

    private Claim() {}

    /** Sets this call's estimate; true when the spend plus every claim now passes the budget. */
    public boolean update(long tokens) {
      synchronized (TokenMeter.this) {
        if (!settled) {
          claimed += tokens - estimate;
          estimate = tokens;
        }
        return spent.total() + claimed > budget;
      }
    }

    /**
     * Replaces the claim by the call's usage, once; later calls change nothing. Returns what the
     * meter counted for the call, the usage of the first call: the call's record reports that, so a
     * job's records add up to its spend whatever happened after.
     */
    public Usage settle(Usage usage) {
      synchronized (TokenMeter.this) {
        if (settled) {
          return counted;
        }
        settled = true;
        counted = usage;
        claimed -= estimate;
        estimate = 0;
      }
      add(usage);
      return usage;
    }
  }
}
