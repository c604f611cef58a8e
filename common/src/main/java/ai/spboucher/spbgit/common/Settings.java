package ai.spboucher.spbgit.common;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;

/**
 * Reads a process's settings by their environment variable names, with one set of rules for every
 * configuration class: typed getters with defaults, sizes and durations as {@link ConfigUnits}
 * spells them, and one message for a value that does not parse, {@code VARIABLE: reason}, or that
 * is out of range, {@code VARIABLE must be between MIN and MAX, got VALUE} (or {@code must be at
 * least MIN} when there is no maximum). Rules that span several settings stay with the
 * configuration that owns them.
 *
 * <p>A value is read stripped of surrounding white space (except by {@link #verbatim}). Whether a
 * variable set to the empty string counts as unset (and takes its default) or as a value (and is
 * then refused where empty means nothing) is chosen once, by the factory: {@link #of} or {@link
 * #keepingEmpty}. Immutable.
 */
public final class Settings {

  private final Map<String, String> values;
  private final boolean emptyIsUnset;

  private Settings(Map<String, String> values, boolean emptyIsUnset) {
    this.values = Map.copyOf(values);
    this.emptyIsUnset = emptyIsUnset;
  }

  /** Settings where a blank variable is an unset one. {@code env} is copied. */
  public static Settings of(Map<String, String> env) {
    return new Settings(withoutNulls(env), true);
  }

  /** Settings where a variable set to the empty string is a value. {@code env} is copied. */
  public static Settings keepingEmpty(Map<String, String> env) {
    return new Settings(withoutNulls(env), false);
  }

  /**
   * The JSON form's values by their environment names: {@code keys} maps each variable to its key
   * in {@code json}. Keys not in {@code keys} are ignored; a non-string value is read as its text.
   */
  public static Map<String, String> byVariable(Map<String, ?> json, Map<String, String> keys) {
    Map<String, String> env = new HashMap<>();
    keys.forEach(
        (variable, key) -> {
          Object value = json.get(key);
          if (value != null) {
            env.put(variable, value.toString());
          }
        });
    return env;
  }

  /**
   * The JSON form of {@code env}: each variable of {@code keys} that is set, under its key; {@code
   * keepEmpty} false leaves blank ones out and strips the others, true copies values as they are.
   */
  public static Map<String, Object> byKey(
      Map<String, String> env, Map<String, String> keys, boolean keepEmpty) {
    Map<String, Object> json = new HashMap<>();
    keys.forEach(
        (variable, key) -> {
          String value = env.get(variable);
          if (value != null && (keepEmpty || !value.isBlank())) {
            json.put(key, keepEmpty ? value : value.strip());
          }
        });
    return json;
  }

  /** The value of {@code variable}, stripped; empty when unset. */
  public Optional<String> value(String variable) {
    String value = values.get(variable);
    if (value == null || (emptyIsUnset && value.isBlank())) {
      return Optional.empty();
    }
    return Optional.of(value.strip());
  }

  /** The value when it is not blank, whichever the factory; empty otherwise. */
  public Optional<String> nonBlank(String variable) {
    return value(variable).filter(v -> !v.isEmpty());
  }

  /** Whether {@code variable} has a value. */
  public boolean isSet(String variable) {
    return value(variable).isPresent();
  }

  /** The value, or {@code fallback} (which may be null) when unset. */
  public String text(String variable, String fallback) {
    return value(variable).orElse(fallback);
  }

  /** The value as it was set, white space included, or {@code fallback} when unset. */
  public String verbatim(String variable, String fallback) {
    return value(variable).isPresent() ? values.get(variable) : fallback;
  }

  /** The value; fails with {@code VARIABLE is missing} when unset. */
  public String required(String variable) {
    return value(variable)
        .orElseThrow(() -> new IllegalArgumentException(variable + " is missing"));
  }

  /** A whole number, or {@code fallback} when unset. */
  public int integer(String variable, int fallback) {
    return parsed(variable, fallback, number(Integer::valueOf, "not a whole number"));
  }

  /** A whole number from {@code min} to {@code max}, or {@code fallback} when unset. */
  public int integer(String variable, int fallback, int min, int max) {
    return (int) inRange(variable, integer(variable, fallback), min, max);
  }

  /** A whole number that may exceed an {@code int}, or {@code fallback} when unset. */
  public long wholeNumber(String variable, long fallback) {
    return parsed(variable, fallback, number(Long::valueOf, "not a whole number"));
  }

  /** A decimal number, or {@code fallback} when unset. */
  public double decimal(String variable, double fallback) {
    return parsed(variable, fallback, number(Double::valueOf, "not a number"));
  }

  /** A size such as {@code 64k} or {@code 2g} ({@link ConfigUnits#parseBytes}), in bytes. */
  public long size(String variable, long fallback) {
    return parsed(variable, fallback, ConfigUnits::parseBytes);
  }

  /** A duration such as {@code 90s} or {@code 30d} ({@link ConfigUnits#parseDuration}). */
  public Duration duration(String variable, Duration fallback) {
    return parsed(variable, fallback, ConfigUnits::parseDuration);
  }

  /** {@code true}/{@code yes}/{@code 1} or {@code false}/{@code no}/{@code 0}, any case. */
  public boolean flag(String variable, boolean fallback) {
    return parsed(variable, fallback, Settings::parseFlag);
  }

  /** A list separated by commas or white space, without empty entries; empty when unset. */
  public List<String> list(String variable) {
    return value(variable)
        .map(v -> Arrays.stream(v.split("[,\\s]+")).filter(s -> !s.isBlank()).toList())
        .orElse(List.of());
  }

  /** A path, or {@code fallback} (which may be null) when unset or blank. */
  public Path path(String variable, Path fallback) {
    return nonBlank(variable).map(Path::of).orElse(fallback);
  }

  /**
   * The value read by {@code parser}, or {@code fallback} when unset. A {@link
   * NumberFormatException} or {@link IllegalArgumentException} without the variable's name in its
   * message becomes {@code VARIABLE: message}.
   */
  public <T> T parsed(String variable, T fallback, Function<String, T> parser) {
    Optional<String> value = value(variable);
    if (value.isEmpty()) {
      return fallback;
    }
    try {
      return parser.apply(value.get());
    } catch (IllegalArgumentException e) {
      String message = String.valueOf(e.getMessage());
      if (message.contains(variable)) {
        throw e;
      }
      throw new IllegalArgumentException(variable + ": " + message, e);
    }
  }

  /** The set ones of {@code variables}, as set, for a reader that takes its own variables. */
  public Map<String, String> subset(List<String> variables) {
    Map<String, String> subset = new HashMap<>();
    for (String variable : variables) {
      if (values.containsKey(variable)) {
        subset.put(variable, values.get(variable));
      }
    }
    return subset;
  }

  /** {@code value}, when it is longer than zero; fails with {@code NAME must be positive}. */
  public static Duration positive(String name, Duration value) {
    if (value == null || value.isNegative() || value.isZero()) {
      throw new IllegalArgumentException(name + " must be positive");
    }
    return value;
  }

  /**
   * {@code value} when it lies from {@code min} to {@code max}; else fails with {@code VARIABLE
   * must be between MIN and MAX, got VALUE}.
   */
  public static long inRange(String variable, long value, long min, long max) {
    if (value < min || value > max) {
      String range =
          max == Integer.MAX_VALUE || max == Long.MAX_VALUE
              ? " must be at least " + min
              : " must be between " + min + " and " + max;
      throw new IllegalArgumentException(variable + range + ", got " + value);
    }
    return value;
  }

  /** {@code parser}, failing with {@code what: 'VALUE'} rather than the JDK's message. */
  private static <T> Function<String, T> number(Function<String, T> parser, String what) {
    return value -> {
      try {
        return parser.apply(value);
      } catch (NumberFormatException e) {
        throw new NumberFormatException(what + ": '" + value + "'");
      }
    };
  }

  private static boolean parseFlag(String value) {
    return switch (value.toLowerCase(Locale.ROOT)) {
      case "true", "yes", "1" -> true;
      case "false", "no", "0" -> false;
      default -> throw new IllegalArgumentException("not true or false: '" + value + "'");
    };
  }

  private static Map<String, String> withoutNulls(Map<String, String> env) {
    Map<String, String> copy = new HashMap<>();
    env.forEach(
        (k, v) -> {
          if (k != null && v != null) {
            copy.put(k, v);
          }
        });
    return copy;
  }
}
