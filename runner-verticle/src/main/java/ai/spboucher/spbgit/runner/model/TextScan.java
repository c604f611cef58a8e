package ai.spboucher.spbgit.runner.model;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonStreamContext;
import com.fasterxml.jackson.core.JsonToken;
import java.io.IOException;
import java.util.function.ToLongFunction;

/**
 * The cheap reading of a server-sent event's {@code data:} that {@link ModelApi#readEvent} uses for
 * the events that make up almost all of a stream, the text deltas: walked token by token for the
 * lengths of its generated text, without building a tree. Stateless.
 */
final class TextScan {

  private static final JsonFactory JSON = new JsonFactory();
  private static final String USAGE = "\"usage\"";

  private TextScan() {}

  /**
   * A string value in an event: its field's name, the name of the object holding it (or of the
   * array holding that object), how deep that object is (1 for the event's own fields), and the
   * value's length in chars.
   */
  record TextField(String name, String parent, int depth, int chars) {}

  /**
   * What one event carries: the chars of generated text {@code textChars} counts in it, and its
   * top-level {@code type} (null when it has none).
   */
  record Result(long chars, String type) {}

  /**
   * Walks {@code data}'s string values, up to the end of its first value as {@code readTree} reads
   * it, summing what {@code textChars} counts of each.
   *
   * @throws IOException when {@code data} is not JSON
   */
  static Result scan(String data, ToLongFunction<TextField> textChars) throws IOException {
    long chars = 0;
    String type = null;
    // Without duplicate detection: these events are only estimated, never billed from.
    try (JsonParser parser = JSON.createParser(data)) {
      for (JsonToken token = parser.nextToken(); token != null; token = parser.nextToken()) {
        if (token.isStructEnd() && parser.getParsingContext().inRoot()) {
          // The event's object ended: what may follow is not read, as readTree does not.
          break;
        }
        if (token != JsonToken.VALUE_STRING) {
          continue;
        }
        JsonStreamContext object = parser.getParsingContext();
        if (!object.inObject()) {
          continue;
        }
        String name = object.getCurrentName();
        JsonStreamContext outer = object.getParent();
        String parent =
            outer == null || outer.getCurrentName() == null ? "" : outer.getCurrentName();
        int depth = object.getNestingDepth();
        if (depth == 1 && name.equals("type") && type == null) {
          type = parser.getText();
          continue;
        }
        chars += textChars.applyAsLong(new TextField(name, parent, depth, parser.getTextLength()));
      }
    }
    return new Result(chars, type);
  }

  /**
   * Whether {@code data} has a {@code "usage"} object (a {@code "usage":null}, which OpenAI's
   * chunks carry, reports nothing), so it must be read whole.
   */
  static boolean namesUsage(String data) {
    for (int at = data.indexOf(USAGE); at >= 0; at = data.indexOf(USAGE, at + 1)) {
      int i = at + USAGE.length();
      while (i < data.length()
          && (data.charAt(i) == ':' || Character.isWhitespace(data.charAt(i)))) {
        i++;
      }
      if (i == data.length() || data.charAt(i) != 'n') {
        return true;
      }
    }
    return false;
  }
}
