package ai.spboucher.spbgit.builtinagent.tools;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * Reading tool arguments as a model writes them: numbers may come as strings, optional fields as
 * null.
 */
final class Args {
  private Args() {}

  static String string(JsonNode args, String name) {
    JsonNode value = args.get(name);
    if (value == null || value.isNull()) {
      throw new IllegalArgumentException("'" + name + "' is required");
    }
    if (!value.isTextual()) {
      throw new IllegalArgumentException("'" + name + "' must be a string");
    }
    return value.asText();
  }

  static String optionalString(JsonNode args, String name, String fallback) {
    JsonNode value = args.get(name);
    return value == null || value.isNull() ? fallback : string(args, name);
  }

  static int optionalInt(JsonNode args, String name, int fallback) {
    JsonNode value = args.get(name);
    if (value == null || value.isNull() || (value.isTextual() && value.asText().isBlank())) {
      return fallback;
    }
    if (value.isIntegralNumber() && value.canConvertToInt()) {
      return value.asInt();
    }
    if (value.isTextual()) {
      try {
        return Integer.parseInt(value.asText().trim());
      } catch (NumberFormatException e) {
        // falls through to the message below
      }
    }
    throw new IllegalArgumentException("'" + name + "' must be a whole number");
  }
}
