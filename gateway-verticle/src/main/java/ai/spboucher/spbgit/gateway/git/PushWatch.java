package ai.spboucher.spbgit.gateway.git;

import io.vertx.core.Vertx;
import io.vertx.ext.web.RoutingContext;
import java.util.function.BooleanSupplier;

/**
 * Stops a push's JGit work from outside it: when the client disconnects, when the push's time is up
 * (even while JGit waits for more of the body) and when its job token is revoked. Each aborts the
 * {@link PushBudget}, which the pack parser checks between chunks of work, and wakes a reader
 * blocked on the request body.
 *
 * <p>Threading: created and run on the request's event loop; its timers fire there too.
 */
final class PushWatch {

  /** How often a job token is looked up in the revocation list (a map lookup) during its push. */
  static final long REVOCATION_POLL_MS = 200;

  private final Vertx vertx;
  private final PushBudget budget;
  private final RequestBodyStream body;
  private final long deadlineTimer;
  private long revocationTimer = -1;

  private PushWatch(Vertx vertx, RoutingContext ctx, PushBudget budget, RequestBodyStream body) {
    this.vertx = vertx;
    this.budget = budget;
    this.body = body;
    this.deadlineTimer =
        vertx.setTimer(
            Math.max(1, budget.limits().timeLimit().toMillis()),
            id -> stop(PushLimitException.timeLimit(budget.limits().timeLimit())));
    ctx.addEndHandler(
        ended -> {
          vertx.cancelTimer(deadlineTimer);
          vertx.cancelTimer(revocationTimer);
          if (ended.failed()) {
            // The connection closed before the answer was complete: nobody is waiting for the work
            // any more.
            stop(PushLimitException.clientDisconnected());
          }
        });
  }

  /** Watches the push of {@code ctx} until its response ends or its connection closes. */
  static PushWatch start(
      Vertx vertx, RoutingContext ctx, PushBudget budget, RequestBodyStream body) {
    return new PushWatch(vertx, ctx, budget, body);
  }

  /** Also stops the push once {@code revoked} says its credential was revoked. */
  void stopWhenRevoked(BooleanSupplier revoked) {
    if (budget.stopped() == null) {
      revocationTimer =
          vertx.setPeriodic(
              REVOCATION_POLL_MS,
              id -> {
                if (revoked.getAsBoolean()) {
                  stop(PushLimitException.tokenRevoked());
                }
              });
    }
  }

  private void stop(PushLimitException reason) {
    vertx.cancelTimer(deadlineTimer);
    vertx.cancelTimer(revocationTimer);
    budget.abort(reason);
    body.abort(budget.stopped());
  }
}
