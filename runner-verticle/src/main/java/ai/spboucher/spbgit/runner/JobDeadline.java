package ai.spboucher.spbgit.runner;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;

/**
 * How long a job may still run before the deadline the gateway gave it, judged without comparing
 * this runner's clock with the gateway's: the two may disagree by minutes, and a runner whose clock
 * is ahead would otherwise refuse or cut short jobs that still have time, and one whose clock is
 * behind would run them past it.
 *
 * <p>The gateway sets both {@code created_epoch_ms} and {@code deadline_epoch_ms} on its own clock,
 * so their difference is the job's whole budget. JetStream stamps the request when it stores it,
 * and stamps the runner's first log line when it stores that, both on the NATS server's clock, so
 * their difference is how long the job waited. What is left is the budget minus the wait: two
 * differences, each taken on a single clock. Only when the request carries no creation time or the
 * stamps cannot be read does the runner fall back to its own clock.
 */
record JobDeadline(long deadlineEpochMs, long createdEpochMs, Instant queuedAt, Instant takenAt) {

  /** The time left until the deadline; zero or negative when it has passed. */
  Duration remaining(Clock runnerClock) {
    if (measuredOnOneClock()) {
      Duration budget = Duration.ofMillis(deadlineEpochMs - createdEpochMs);
      Duration waited = Duration.between(queuedAt, takenAt);
      // The two stamps come from the same server, so only a clock step on it makes this negative.
      return waited.isNegative() ? budget : budget.minus(waited);
    }
    return Duration.ofMillis(deadlineEpochMs - runnerClock.millis());
  }

  /**
   * Whether {@link #remaining} is measured from the queue's stamps rather than this runner's clock.
   */
  boolean measuredOnOneClock() {
    return createdEpochMs > 0 && queuedAt != null && takenAt != null;
  }
}
