package ai.spboucher.spbgit.common;

import java.time.Duration;

/**
 * Sizes and durations as the gateway's and the runner's configuration spell them, with one set of
 * rules for both, so {@code SPB_LIMIT_WALL=1d} on a runner means what {@code SPB_LOG_RETENTION=1d}
 * means on the gateway. Malformed values throw {@link NumberFormatException} naming the value.
 */
public final class ConfigUnits {

  private ConfigUnits() {}

  /** Sizes such as {@code 512}, {@code 64k}, {@code 100m}, {@code 2g} (binary units). */
  public static long parseBytes(String value) {
    String v = trimmed(value);
    long multiplier =
        switch (v.charAt(v.length() - 1)) {
          case 'k' -> 1L << 10;
          case 'm' -> 1L << 20;
          case 'g' -> 1L << 30;
          default -> 1L;
        };
    long n = nonNegative(value, multiplier == 1 ? v : v.substring(0, v.length() - 1));
    try {
      return Math.multiplyExact(n, multiplier);
    } catch (ArithmeticException e) {
      throw new NumberFormatException("size too large: " + value);
    }
  }

  /** Durations such as {@code 90s}, {@code 30m}, {@code 2h}, {@code 30d}, or plain seconds. */
  public static Duration parseDuration(String value) {
    String v = trimmed(value);
    char unit = v.charAt(v.length() - 1);
    long n = nonNegative(value, Character.isDigit(unit) ? v : v.substring(0, v.length() - 1));
    return switch (unit) {
      case 'd' -> Duration.ofDays(n);
      case 'h' -> Duration.ofHours(n);
      case 'm' -> Duration.ofMinutes(n);
      case 's' -> Duration.ofSeconds(n);
      default -> {
        if (!Character.isDigit(unit)) {
          throw new NumberFormatException(
              "unknown unit in duration '" + value + "' (use s, m, h or d)");
        }
        yield Duration.ofSeconds(n);
      }
    };
  }

  private static String trimmed(String value) {
    String v = value.trim().toLowerCase();
    if (v.isEmpty()) {
      throw new NumberFormatException("empty value");
    }
    return v;
  }

  private static long nonNegative(String value, String digits) {
    long n;
    try {
      n = Long.parseLong(digits);
    } catch (NumberFormatException e) {
      throw new NumberFormatException("not a number: '" + value + "'");
    }
    if (n < 0) {
      throw new NumberFormatException("must not be negative: '" + value + "'");
    }
    return n;
  }
}
