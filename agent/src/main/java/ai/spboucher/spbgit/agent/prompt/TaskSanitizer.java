package ai.spboucher.spbgit.agent.prompt;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Cleans the owner's task text before the model sees it. Text copied from an issue or a web page can
 * carry instructions a person does not see: zero-width and bidi control characters, Unicode tag
 * characters, private-use characters, and HTML comments (invisible once Markdown is rendered). All of
 * them are removed, and the delimiters the prompt uses are neutralised so the text cannot close them.
 */
public final class TaskSanitizer {
  private static final Pattern HTML_COMMENT = Pattern.compile("<!--.*?(?:-->|\\z)", Pattern.DOTALL);
  private static final Pattern DELIMITER = Pattern.compile("<(/?\\s*(?:task|test_command)\\b)",
      Pattern.CASE_INSENSITIVE);

  private TaskSanitizer() {
  }

  /**
   * The cleaned text and what was removed.
   *
   * @param hiddenCharacters code points removed
   * @param htmlComments     HTML comments removed (an unterminated one runs to the end)
   */
  public record Sanitized(String text, int hiddenCharacters, int htmlComments) {
  }

  public static Sanitized sanitize(String raw) {
    String visible = stripHidden(raw);
    int hidden = raw.codePointCount(0, raw.length()) - visible.codePointCount(0, visible.length());
    Matcher comments = HTML_COMMENT.matcher(visible);
    int count = 0;
    StringBuilder out = new StringBuilder();
    while (comments.find()) {
      count++;
      comments.appendReplacement(out, "");
    }
    comments.appendTail(out);
    String text = DELIMITER.matcher(out).replaceAll("&lt;$1").strip();
    return new Sanitized(text, hidden, count);
  }

  /** Removes every code point a reader would not see (see {@link #hidden(int)}). */
  public static String stripHidden(String text) {
    StringBuilder out = new StringBuilder(text.length());
    text.codePoints().filter(c -> !hidden(c)).forEach(out::appendCodePoint);
    return out.toString();
  }

  /**
   * Zero-width and bidi controls (U+200B–U+200F, U+202A–U+202E, U+2060–U+2064, U+FEFF), every other
   * format (Cf), private-use (Co), unassigned (Cn) and surrogate (Cs) code point, control characters
   * other than tab, line feed and carriage return, and variation selectors (which can smuggle bytes).
   */
  public static boolean hidden(int c) {
    if (c == '\t' || c == '\n' || c == '\r') {
      return false;
    }
    if ((c >= 0xFE00 && c <= 0xFE0F) || (c >= 0xE0100 && c <= 0xE01EF)) {
      return true;
    }
    return switch (Character.getType(c)) {
      case Character.CONTROL, Character.FORMAT, Character.PRIVATE_USE, Character.SURROGATE,
          Character.UNASSIGNED -> true;
      default -> false;
    };
  }
}
