package ai.spboucher.spbgit.hooks;

import java.util.Random;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Function;

/**
 * A small seeded fuzz harness for JUnit Jupiter tests: a property is checked on inputs drawn from a
 * generator, and a failure names the seed and the try so the exact input comes back with {@code
 * -Dspb.fuzz.seed=S}.
 *
 * <p>{@code -Dspb.fuzz.tries=N} overrides every property's default number of tries (for a longer
 * run); {@code -Dspb.fuzz.seed=S} fixes the seed (to replay a failure). Each try draws from its own
 * {@link Random} derived from the seed and the try's index, so what one try consumes never shifts
 * the inputs of the next.
 */
public final class Fuzz {

  /** System property: tries per property, overriding the defaults. */
  public static final String TRIES = "spb.fuzz.tries";

  /** System property: the seed of the run. */
  public static final String SEED = "spb.fuzz.seed";

  private static final int SHOWN_CHARS = 600;

  private Fuzz() {}

  /** A check on one generated input; it fails by throwing. */
  @FunctionalInterface
  public interface Property<T> {
    void check(T input) throws Exception;
  }

  /** The number of tries for a property whose default is {@code defaultTries}. */
  public static int tries(int defaultTries) {
    int tries = Integer.getInteger(TRIES, defaultTries);
    if (tries < 1) {
      throw new IllegalArgumentException(TRIES + " must be at least 1");
    }
    return tries;
  }

  /** The seed of this run: {@code spb.fuzz.seed} when set, otherwise a fresh one. */
  public static long seed() {
    String fixed = System.getProperty(SEED);
    return fixed == null || fixed.isBlank()
        ? ThreadLocalRandom.current().nextLong()
        : Long.parseLong(fixed.strip());
  }

  /** The random source of try {@code index} in a run with {@code seed}. */
  public static Random randomFor(long seed, int index) {
    // SplitMix64's finaliser: neighbouring indexes get unrelated streams.
    long z = seed + (index + 1) * 0x9E3779B97F4A7C15L;
    z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
    z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
    return new Random(z ^ (z >>> 31));
  }

  /**
   * Checks {@code property} on {@link #tries(int)} inputs drawn by {@code generator}. The first
   * failure stops the run with an {@link AssertionError} naming the seed, the try and the input (as
   * {@code describe} shows it).
   */
  public static <T> void forAll(
      String name,
      int defaultTries,
      Function<Random, ? extends T> generator,
      Function<? super T, String> describe,
      Property<? super T> property) {
    long seed = seed();
    int tries = tries(defaultTries);
    for (int i = 0; i < tries; i++) {
      T input;
      try {
        input = generator.apply(randomFor(seed, i));
      } catch (RuntimeException failure) {
        throw new AssertionError(
            failureMessage(name, seed, i, tries, "(the generator failed)", failure), failure);
      }
      try {
        property.check(input);
      } catch (Throwable failure) {
        throw new AssertionError(
            failureMessage(name, seed, i, tries, describe.apply(input), failure), failure);
      }
    }
  }

  /** The message of a failed try; also used by tests that drive their own loop. */
  public static String failureMessage(
      String name, long seed, int index, int tries, String input, Throwable failure) {
    return name
        + " failed on try "
        + (index + 1)
        + " of "
        + tries
        + " (replay: -D"
        + SEED
        + "="
        + seed
        + ")\n"
        + "  input: "
        + input
        + "\n  cause: "
        + failure;
  }

  /**
   * {@code text} with every character outside printable ASCII escaped, cut to a readable length.
   */
  public static String show(String text) {
    if (text == null) {
      return "null";
    }
    StringBuilder out = new StringBuilder("\"");
    for (int i = 0; i < text.length() && out.length() < SHOWN_CHARS; i++) {
      char c = text.charAt(i);
      if (c == '"' || c == '\\') {
        out.append('\\').append(c);
      } else if (c >= 0x20 && c < 0x7f) {
        out.append(c);
      } else {
        out.append(String.format("\\u%04x", (int) c));
      }
    }
    if (out.length() >= SHOWN_CHARS) {
      out.append("... (").append(text.length()).append(" chars)");
    }
    return out.append('"').toString();
  }

  /** {@code bytes} as printable ASCII with {@code \xNN} escapes, cut to a readable length. */
  public static String show(byte[] bytes) {
    StringBuilder out = new StringBuilder("b\"");
    for (int i = 0; i < bytes.length && out.length() < SHOWN_CHARS; i++) {
      int b = bytes[i] & 0xff;
      if (b == '"' || b == '\\') {
        out.append('\\').append((char) b);
      } else if (b >= 0x20 && b < 0x7f) {
        out.append((char) b);
      } else {
        out.append(String.format("\\x%02x", b));
      }
    }
    if (out.length() >= SHOWN_CHARS) {
      out.append("... (").append(bytes.length).append(" bytes)");
    }
    return out.append('"').toString();
  }
}
