package ai.spboucher.spbgit.common;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Cleans the owner's task text before the model sees it. Text copied from an issue or a web page
 * can carry instructions a person does not see: zero-width and bidi control characters, Unicode tag
 * characters, private-use characters, and HTML comments (invisible once Markdown is rendered). All
 * of them are removed ({@link #visible}), and for the prompt the delimiters it uses are neutralised
 * so the text cannot close them ({@link #sanitize}). The agent cleans the owner's standing
 * instructions ({@code AGENTS.md}) the same way.
 *
 * <p>The runner applies {@link #visible} before the task enters the container, so the commit
 * message the entrypoint writes is the text the model was given; the agent applies {@link
 * #sanitize} again, which gives the same prompt whether or not the runner cleaned the task first.
 */
public final class TaskSanitizer {
  private static final Pattern HTML_COMMENT = Pattern.compile("<!--.*?(?:-->|\\z)", Pattern.DOTALL);
  private static final Pattern DELIMITER =
      Pattern.compile(
          "<(/?\\s*(?:task|test_command|owner_instructions)\\b)", Pattern.CASE_INSENSITIVE);

  private TaskSanitizer() {}

  /**
   * The cleaned text and what was removed.
   *
   * @param hiddenCharacters code points removed
   * @param htmlComments HTML comments removed (an unterminated one runs to the end)
   */
  public record Sanitized(String text, int hiddenCharacters, int htmlComments) {}

  /** The task as the model sees it: {@link #visible} with the prompt's delimiters neutralised. */
  public static Sanitized sanitize(String raw) {
    Sanitized visible = visible(raw);
    return new Sanitized(
        DELIMITER.matcher(visible.text()).replaceAll("&lt;$1"),
        visible.hiddenCharacters(),
        visible.htmlComments());
  }

  /**
   * The task as a reader sees it: hidden code points and HTML comments removed, surrounding
   * whitespace stripped. Cleaning the result again changes nothing.
   */
  public static Sanitized visible(String raw) {
    String text = stripHidden(raw);
    int hidden = raw.codePointCount(0, raw.length()) - text.codePointCount(0, text.length());
    int count = 0;
    // Removing one comment can join the text around it into another ("<!<!-- -->-- x -->"): repeat
    // until none is left.
    while (true) {
      Matcher comments = HTML_COMMENT.matcher(text);
      StringBuilder out = new StringBuilder();
      int found = 0;
      while (comments.find()) {
        found++;
        comments.appendReplacement(out, "");
      }
      if (found == 0) {
        return new Sanitized(text.strip(), hidden, count);
      }
      comments.appendTail(out);
      text = out.toString();
      count += found;
    }
  }

  /** Removes every code point a reader would not see (see {@link #hidden(int)}). */
  public static String stripHidden(String text) {
    StringBuilder out = new StringBuilder(text.length());
    text.codePoints().filter(c -> !hidden(c)).forEach(out::appendCodePoint);
    return out.toString();
  }

  /**
   * Zero-width and bidi controls (U+200B–U+200F, U+202A–U+202E, U+2060–U+2064, U+FEFF), every other
   * format (Cf), private-use (Co), unassigned (Cn) and surrogate (Cs) code point, control
   * characters other than tab, line feed and carriage return, and variation selectors (which can
   * smuggle bytes).
   */
  public static boolean hidden(int c) {
    if (c == '\t' || c == '\n' || c == '\r') {
      return false;
    }
    if ((c >= 0xFE00 && c <= 0xFE0F) || (c >= 0xE0100 && c <= 0xE01EF)) {
      return true;
    }
    return switch (Character.getType(c)) {
      case Character.CONTROL,
          Character.FORMAT,
          Character.PRIVATE_USE,
          Character.SURROGATE,
          Character.UNASSIGNED ->
          true;
      default -> false;
    };
  }
}
