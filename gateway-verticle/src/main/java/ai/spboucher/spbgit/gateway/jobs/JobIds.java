package ai.spboucher.spbgit.gateway.jobs;

import java.security.SecureRandom;
import java.time.Clock;

/**
 * Job ids: short, time-sortable and ref-safe, e.g. {@code mi3k2x1c-7qz0}: the creation time in base
 * 36 milliseconds (fixed width until 2059, so ids sort by time) and four random base-36 characters.
 */
public final class JobIds {

  private static final SecureRandom RANDOM = new SecureRandom();
  private static final String DIGITS = "0123456789abcdefghijklmnopqrstuvwxyz";

  private JobIds() {}

  public static String next(Clock clock) {
    StringBuilder id = new StringBuilder(Long.toString(clock.millis(), 36)).append('-');
    for (int i = 0; i < 4; i++) {
      id.append(DIGITS.charAt(RANDOM.nextInt(DIGITS.length())));
    }
    return id.toString();
  }
}
