package ai.spboucher.spbgit.gateway.git;

import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

/**
 * Lets only as many pushes unpack at once as the heap holds. While it resolves deltas, JGit keeps a
 * base and the object it builds, each up to {@code SPB_MAX_OBJECT_BYTES}; four pushes of 96 MiB
 * objects ran a gateway's heap out. So each push reserves twice the object limit (at most all of
 * the gate) from half the heap once its upload is complete, and gives it back when it is done; the
 * others wait, still stopped by their own bounds. Only this CPU-bound phase is gated: the upload
 * before it goes at the client's pace and must not hold other pushes up.
 *
 * <p>Threading: safe from any thread; {@link #enter} blocks.
 */
final class PushMemoryGate {

  private static final long UNIT = 1 << 20;
  private static final long POLL_MS = 100;

  private final Semaphore units;
  private final int perPush;

  /**
   * @param heapBytes the memory the pushes may share, usually half the heap
   * @param maxObjectBytes the largest object a push may build
   */
  PushMemoryGate(long heapBytes, long maxObjectBytes) {
    int capacity = (int) Math.max(1, Math.min(Integer.MAX_VALUE, heapBytes / UNIT));
    this.units = new Semaphore(capacity);
    this.perPush = (int) Math.max(1, Math.min(capacity, 2 * maxObjectBytes / UNIT));
  }

  /** A gate over half of this JVM's heap. */
  static PushMemoryGate forThisHeap(long maxObjectBytes) {
    return new PushMemoryGate(Runtime.getRuntime().maxMemory() / 2, maxObjectBytes);
  }

  /**
   * Waits for this push's share, checking {@code budget} in between so a stopped push stops
   * waiting.
   */
  void enter(PushBudget budget) {
    try {
      while (!units.tryAcquire(perPush, POLL_MS, TimeUnit.MILLISECONDS)) {
        budget.checkpoint();
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while waiting for memory to unpack a push", e);
    }
  }

  void leave() {
    units.release(perPush);
  }
}
