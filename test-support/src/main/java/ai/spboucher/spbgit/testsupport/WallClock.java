package ai.spboucher.spbgit.testsupport;

import java.time.Clock;
import java.time.Instant;

/**
 * Microseconds since the epoch from the system's real-time clock: the clock a container's {@code
 * date} and {@code gettimeofday} read on the same machine, so a time printed in a container and a
 * time taken here compare.
 */
public final class WallClock {

  private static final Clock CLOCK = Clock.systemUTC();

  private WallClock() {}

  public static long micros() {
    Instant now = CLOCK.instant();
    return now.getEpochSecond() * 1_000_000L + now.getNano() / 1_000;
  }
}
