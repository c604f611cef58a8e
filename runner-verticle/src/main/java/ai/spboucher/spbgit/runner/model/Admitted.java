package ai.spboucher.spbgit.runner.model;

import ai.spboucher.spbgit.runner.sockets.Refusal;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * What one value of a model request may be, as a positive list: an object with only the named
 * fields, a list of such values, one of the named variants of a typed object, a {@code data:} URL,
 * {@code false}. A value the list does not name is refused with 400 {@code feature_not_allowed},
 * naming the field by its path in the body ({@code input[2].content[0].image_url}), so what a
 * provider adds later stays out until someone judged it. A JSON {@code null} passes wherever a
 * value is expected: the APIs take it as the field's absence.
 *
 * <p>Plain Java, no I/O; immutable and thread-safe. The tables built from it are {@link
 * ChatCompletionsRequests}, {@link ResponsesRequests} and {@link MessagesRequests}.
 */
abstract class Admitted {

  /** The refusal's type in the endpoint's {@code {"error":{"type":...}}}. */
  static final String REFUSAL_TYPE = "feature_not_allowed";

  /** Any value: free-form data the provider does not act on outside its model. */
  static final Admitted ANY =
      new Admitted() {
        @Override
        void check(JsonNode value, String path) {}
      };

  /** Only {@code false} (or null): a switch that must stay off. */
  static Admitted onlyFalse(String why) {
    return new Admitted() {
      @Override
      void check(JsonNode value, String path) throws Refusal {
        if (!value.isNull() && !(value.isBoolean() && !value.booleanValue())) {
          throw refused(path + " may only be false: " + why);
        }
      }
    };
  }

  /**
   * A URL given inline as {@code data:}: the providers fetch any other URL themselves, from their
   * own network, with whatever its query string carries.
   */
  static final Admitted DATA_URL =
      new Admitted() {
        @Override
        void check(JsonNode value, String path) throws Refusal {
          if (!value.isNull()
              && !(value.isTextual()
                  && value.textValue().toLowerCase(Locale.ROOT).startsWith("data:"))) {
            throw refused(
                path
                    + " must be a data: URL: the provider would fetch any other URL itself,"
                    + " outside the job's allow-list");
          }
        }
      };

  /**
   * Checks {@code value}, found at {@code path}.
   *
   * @throws Refusal 400 {@code feature_not_allowed} naming the first value not admitted
   */
  abstract void check(JsonNode value, String path) throws Refusal;

  /** An object with only the named fields, each of them any value. */
  static Fields fields(String... names) {
    Map<String, Admitted> fields = new LinkedHashMap<>();
    for (String name : names) {
      fields.put(name, ANY);
    }
    return new Fields(fields);
  }

  /** A list whose every element is {@code element}. */
  static Admitted listOf(Admitted element) {
    return new Admitted() {
      @Override
      void check(JsonNode value, String path) throws Refusal {
        if (value.isNull()) {
          return;
        }
        if (!(value instanceof ArrayNode list)) {
          throw refused(path + " must be a list");
        }
        for (int i = 0; i < list.size(); i++) {
          element.check(list.get(i), path + "[" + i + "]");
        }
      }
    };
  }

  /** A plain string, or else {@code other} (a message's content: text, or a list of parts). */
  static Admitted textOr(Admitted other) {
    return new Admitted() {
      @Override
      void check(JsonNode value, String path) throws Refusal {
        if (!value.isTextual()) {
          other.check(value, path);
        }
      }
    };
  }

  /** Objects told apart by their {@code type}: each admitted type with its own fields. */
  static Variants byType() {
    return new Variants("type", null, Map.of());
  }

  /** Objects told apart by another field (a chat message by its {@code role}). */
  static Variants by(String discriminator) {
    return new Variants(discriminator, null, Map.of());
  }

  static Refusal refused(String message) {
    return new Refusal(
        400,
        REFUSAL_TYPE,
        message
            + " (the model endpoint forwards only what stays inside the provider's model; see"
            + " docs/sandbox.md)");
  }

  /** An object with only these fields; build it with {@link #with}. */
  static final class Fields extends Admitted {

    private final Map<String, Admitted> fields;

    private Fields(Map<String, Admitted> fields) {
      this.fields = fields;
    }

    /** These fields and {@code name}, which must be {@code admitted}. */
    Fields with(String name, Admitted admitted) {
      Map<String, Admitted> more = new LinkedHashMap<>(fields);
      more.put(name, admitted);
      return new Fields(more);
    }

    /** These fields and the plain ones named. */
    Fields and(String... names) {
      Fields more = this;
      for (String name : names) {
        more = more.with(name, ANY);
      }
      return more;
    }

    Set<String> names() {
      return fields.keySet();
    }

    @Override
    void check(JsonNode value, String path) throws Refusal {
      if (value.isNull()) {
        return;
      }
      if (!value.isObject()) {
        throw refused((path.isEmpty() ? "the body" : path) + " must be an object");
      }
      List<String> names = new ArrayList<>();
      value.fieldNames().forEachRemaining(names::add);
      for (String name : names) {
        String at = path.isEmpty() ? name : path + "." + name;
        Admitted field = fields.get(name);
        if (field == null) {
          throw refused(
              at
                  + " is not among the fields admitted here ("
                  + String.join(", ", new TreeSet<>(fields.keySet()))
                  + ")");
        }
        field.check(value.get(name), at);
      }
    }
  }

  /** Objects told apart by one field's value: each admitted value has its own shape. */
  static final class Variants extends Admitted {

    private final String discriminator;
    private final Admitted untyped;
    private final Map<String, Admitted> variants;

    private Variants(String discriminator, Admitted untyped, Map<String, Admitted> variants) {
      this.discriminator = discriminator;
      this.untyped = untyped;
      this.variants = variants;
    }

    /** The variant {@code value}, shaped {@code admitted}. */
    Variants with(String value, Admitted admitted) {
      Map<String, Admitted> more = new LinkedHashMap<>(variants);
      more.put(value, admitted);
      return new Variants(discriminator, untyped, more);
    }

    /** Each of these variants, all shaped {@code admitted}. */
    Variants with(List<String> values, Admitted admitted) {
      Variants more = this;
      for (String value : values) {
        more = more.with(value, admitted);
      }
      return more;
    }

    /** The shape of an object without the discriminating field. */
    Variants untyped(Admitted admitted) {
      return new Variants(discriminator, admitted, variants);
    }

    Set<String> admittedValues() {
      return variants.keySet();
    }

    @Override
    void check(JsonNode value, String path) throws Refusal {
      if (value.isNull()) {
        return;
      }
      if (!value.isObject()) {
        throw refused(path + " must be an object");
      }
      JsonNode kind = value.get(discriminator);
      if (kind == null || kind.isNull()) {
        if (untyped == null) {
          throw refused(path + " has no " + discriminator);
        }
        untyped.check(value, path);
        return;
      }
      Admitted variant = kind.isTextual() ? variants.get(kind.textValue()) : null;
      if (variant == null) {
        throw refused(
            path
                + "."
                + discriminator
                + " "
                + kind
                + " is not among the "
                + discriminator
                + "s admitted here ("
                + String.join(", ", new TreeSet<>(variants.keySet()))
                + ")");
      }
      variant.check(value, path);
    }
  }
}
