package ai.spboucher.spbgit.gateway.git;

import java.io.IOException;
import java.time.Duration;
import org.eclipse.jgit.internal.storage.file.BoundedPackParser;

/**
 * What one push may cost after its pack is inflated, and the switch that stops it. The compressed size is bounded
 * elsewhere ({@code SPB_MAX_PUSH_BYTES}); a small pack can still inflate to gigabytes, since a delta of a few
 * hundred bytes may copy its base thousands of times over. So this counts every byte JGit inflates or builds
 * (whole objects, delta instructions, the objects deltas produce), bounds the depth of delta chains (each link
 * is another delta to apply on every later read of the object) and the push's wall-clock time, and lets other
 * threads stop it: when its client goes away or its token is revoked.
 *
 * <p>Threading: the {@link BoundedPackParser.Bounds} methods run on the one thread parsing the pack; {@link #abort} may be called from any thread, and takes effect at that thread's next checkpoint.
 */
final class PushBudget implements BoundedPackParser.Bounds {

  /**
   * @param maxInflatedBytes the bytes a push may inflate in all
   * @param maxDeltaDepth    the longest delta chain a push may store
   * @param timeLimit        the wall-clock time a push may take, from its request's arrival
   */
  record Limits(long maxInflatedBytes, int maxDeltaDepth, Duration timeLimit) {
  }

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

  @Override
  public void inflating(long bytes) throws IOException {
    checkpoint();
    inflated += bytes;
    if (inflated > limits.maxInflatedBytes()) {
      throw refuse(PushLimitException.inflatedSize(limits.maxInflatedBytes()));
    }
  }

  @Override
  public void resolved(long bytes, int depth) throws IOException {
    if (depth > limits.maxDeltaDepth()) {
      throw refuse(PushLimitException.deltaDepth(limits.maxDeltaDepth()));
    }
    inflating(bytes);
  }

  @Override
  public void checkpoint() throws PushLimitException {
    if (stop == null && System.nanoTime() - deadline > 0) {
      abort(PushLimitException.timeLimit(limits.timeLimit()));
    }
    PushLimitException reason = stop;
    if (reason != null) {
      throw reason;
    }
  }

  @Override
  public void resolvingDeltas() throws IOException {
    memory.enter(this);
    inGate = true;
  }

  @Override
  public void parseEnded() {
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
