package ai.spboucher.spbgit.gateway.git;

import java.time.Duration;

/**
 * What one push may cost after its pack is inflated, and the switch that stops it. The compressed
 * size is bounded elsewhere ({@code SPB_MAX_PUSH_BYTES}); a small pack can still inflate to
 * gigabytes, since a delta of a few dozen bytes may copy its base many times over. So this counts
 * the bytes of every object JGit inflates or builds from a delta, bounds the depth of the delta
 * chains a push stores (each link is another delta to apply on every later read of the object) and
 * the push's wall-clock time, and lets other threads stop it: when its client goes away or its
 * token is revoked. Once the upload is complete the push also waits for its share of the {@link
 * PushMemoryGate} before it builds objects.
 *
 * <p>Threading: {@link #inflating}, {@link #checkpoint}, {@link #uploadEnded} and {@link #finished}
 * run on the one thread running the push; {@link #abort} may be called from any thread, and takes
 * effect at that thread's next checkpoint.
 */
final class PushBudget {

  /**
   * @param maxInflatedBytes the bytes a push may inflate in all
   * @param maxDeltaDepth the longest delta chain a push may store
   * @param timeLimit the wall-clock time a push may take, from its request's arrival
   */
  record Limits(long maxInflatedBytes, int maxDeltaDepth, Duration timeLimit) {}

  private final Limits limits;
  private final PushMemoryGate memory;
  private final long deadline;
  private long inflated;
  private boolean inGate;
  private volatile PushLimitException stop;

  PushBudget(Limits limits, PushMemoryGate memory) {
    this.limits = limits;
    this.memory = memory;
    this.deadline = System.nanoTime() + limits.timeLimit().toNanos();
  }

  Limits limits() {
    return limits;
  }

  /** Stops the push at its next checkpoint; the first reason given wins. */
  void abort(PushLimitException reason) {
    if (stop == null) {
      stop = reason;
    }
  }

  /** Why the push was stopped, or null while it may go on. */
  PushLimitException stopped() {
    return stop;
  }

  /**
   * Counts {@code bytes} more of inflated objects; throws once the push is past its limit or
   * stopped.
   */
  void inflating(long bytes) {
    checkpoint();
    inflated += bytes;
    if (inflated > limits.maxInflatedBytes()) {
      throw refuse(PushLimitException.inflatedSize(limits.maxInflatedBytes()));
    }
  }

  /** Throws if {@code depth}, the longest delta chain of the received pack, is over the limit. */
  void checkDeltaDepth(int depth) {
    if (depth > limits.maxDeltaDepth()) {
      throw refuse(PushLimitException.deltaDepth(limits.maxDeltaDepth()));
    }
  }

  /**
   * Throws the reason the push has to stop (its time is up, or {@link #abort} was called), if there
   * is one.
   */
  void checkpoint() {
    if (stop == null && System.nanoTime() - deadline > 0) {
      abort(PushLimitException.timeLimit(limits.timeLimit()));
    }
    PushLimitException reason = stop;
    if (reason != null) {
      throw reason;
    }
  }

  /**
   * The whole body has arrived: what follows (resolving deltas, checks, ref updates) is CPU and
   * memory, so wait for a share of the gate first. Idempotent.
   */
  void uploadEnded() {
    if (!inGate) {
      memory.enter(this);
      inGate = true;
    }
  }

  /** The push is over, well or not: gives its share of the gate back. */
  void finished() {
    if (inGate) {
      inGate = false;
      memory.leave();
    }
  }

  private PushLimitException refuse(PushLimitException reason) {
    abort(reason);
    return stop;
  }
}
