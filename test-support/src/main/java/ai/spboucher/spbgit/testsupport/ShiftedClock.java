package ai.spboucher.spbgit.testsupport;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;

/**
 * The system clock, moved forward on demand: give it to the code under test (a gateway, say) and
 * its deadlines and expiries pass without the test waiting for them. Thread-safe.
 */
public final class ShiftedClock extends Clock {
  private volatile Duration offset = Duration.ZERO;

  /** Moves this clock forward by {@code by}, on top of earlier shifts. */
  public void shift(Duration by) {
    offset = offset.plus(by);
  }

  @Override
  public ZoneId getZone() {
    return ZoneOffset.UTC;
  }

  @Override
  public Clock withZone(ZoneId zone) {
    return this;
  }

  @Override
  public Instant instant() {
    return Instant.now().plus(offset);
  }
}
