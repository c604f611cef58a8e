package ai.spboucher.spbgit.runner.model;

import ai.spboucher.spbgit.runner.sockets.Refusal;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;

/**
 * The calls one job may have in flight at once ({@code SPB_MODEL_CONCURRENCY}): a call beyond them
 * waits, first come first served, for at most {@code maxWait}, then fails with 503 {@code
 * too_many_calls} (with {@code retry-after: 1}, which the providers' SDKs honour). The wait needs
 * no bound of its own in size: every waiting call holds one of the endpoint's connections.
 *
 * <p>Threading: thread-safe; {@link #acquire} is called on an event loop and its future completes
 * on that event loop's context.
 */
final class CallSlots {

  /** Gives a slot back; idempotent. */
  interface Slot {
    void release();
  }

  private record Waiter(Context context, Promise<Slot> promise, long timer) {}

  private final Vertx vertx;
  private final int max;
  private final Duration maxWait;
  private final Deque<Waiter> waiting = new ArrayDeque<>();
  private int busy;

  CallSlots(Vertx vertx, int max, Duration maxWait) {
    this.vertx = vertx;
    this.max = max;
    this.maxWait = maxWait;
  }

  /** A slot, now or once one is released; fails with the 503 refusal after {@code maxWait}. */
  Future<Slot> acquire() {
    Context context = vertx.getOrCreateContext();
    Promise<Slot> promise = Promise.promise();
    synchronized (this) {
      if (busy < max) {
        busy++;
        promise.complete(newSlot());
        return promise.future();
      }
      long timer = vertx.setTimer(maxWait.toMillis(), id -> giveUp(promise));
      waiting.addLast(new Waiter(context, promise, timer));
    }
    return promise.future();
  }

  synchronized int inFlight() {
    return busy;
  }

  private synchronized void giveUp(Promise<Slot> promise) {
    if (waiting.removeIf(waiter -> waiter.promise() == promise)) {
      promise.tryFail(
          new Refusal(
              503,
              "too_many_calls",
              "more than "
                  + max
                  + " model calls of this job at once waited "
                  + maxWait.toSeconds()
                  + " s for their turn (SPB_MODEL_CONCURRENCY)"));
    }
  }

  private Slot newSlot() {
    boolean[] released = new boolean[1];
    return () -> {
      Waiter next;
      synchronized (this) {
        if (released[0]) {
          return;
        }
        released[0] = true;
        next = waiting.pollFirst();
        if (next == null) {
          busy--;
          return;
        }
        vertx.cancelTimer(next.timer());
      }
      // The slot passes to the next call as it is: busy stays the same.
      Slot handedOn = newSlot();
      next.context().runOnContext(v -> next.promise().complete(handedOn));
    };
  }
}
