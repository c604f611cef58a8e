package ai.spboucher.spbgit.cli.text;

/**
 * Makes untrusted job output safe for a terminal. Escape sequences are parsed, not matched by a
 * pattern, and the parser keeps its state between {@link #filter} calls, so a sequence split across
 * two log chunks is handled like one that is not.
 *
 * <p>With {@code keepColours}, SGR sequences ({@code ESC [ ... m}: colours, bold) pass; every other
 * escape sequence (cursor moves, screen clears, window titles, clipboard writes, device queries)
 * and every control character other than tab, newline and carriage return is removed, in both
 * modes, as are Unicode bidirectional overrides: a job's log cannot drive the owner's terminal or
 * reorder what it shows. Without {@code keepColours}, SGR sequences are removed too (for pipes and
 * files).
 *
 * <p>Not thread-safe: one filter per output stream.
 */
public final class AnsiFilter {

  private static final char ESC = 0x1b;
  private static final char BEL = 0x07;
  private static final char C1_DCS = 0x90;
  private static final char C1_CSI = 0x9b;
  private static final char C1_ST = 0x9c;
  private static final char C1_OSC = 0x9d;

  /**
   * Past this many characters an unterminated sequence is given up on, so it cannot swallow the
   * rest of a log.
   */
  private static final int MAX_SEQUENCE = 4096;

  private enum State {
    TEXT,
    ESCAPE,
    ESCAPE_INTERMEDIATE,
    CSI,
    STRING,
    STRING_ESCAPE
  }

  private final boolean keepColours;

  /** The CSI sequence being read, to pass it on if it turns out to be a colour. */
  private final StringBuilder sequence = new StringBuilder();

  private int length;
  private State state = State.TEXT;
  private boolean coloured;

  public AnsiFilter(boolean keepColours) {
    this.keepColours = keepColours;
  }

  /**
   * {@code text} without what must not reach the output; may hold back the start of an unfinished
   * sequence.
   */
  public String filter(String text) {
    StringBuilder out = new StringBuilder(text.length());
    for (int i = 0; i < text.length(); i++) {
      accept(text.charAt(i), out);
    }
    return out.toString();
  }

  /**
   * What to print when the stream ends: the reset sequence if a colour was left switched on, so the
   * terminal's prompt is not coloured by the job. Drops any unfinished sequence.
   */
  public String finish() {
    end();
    if (coloured) {
      coloured = false;
      return ESC + "[0m";
    }
    return "";
  }

  /**
   * One line with every escape sequence and control character removed (tabs and newlines become
   * spaces).
   */
  public static String plain(String text) {
    if (text == null) {
      return "";
    }
    return new AnsiFilter(false).filter(text).replaceAll("[\t\r\n]", " ");
  }

  /** {@code text} with every escape sequence and disallowed control character removed. */
  public static String strip(String text) {
    return new AnsiFilter(false).filter(text);
  }

  private void accept(char c, StringBuilder out) {
    switch (state) {
      case TEXT -> text(c, out);
      case ESCAPE -> escape(c, out);
      case ESCAPE_INTERMEDIATE -> escapeIntermediate(c, out);
      case CSI -> csi(c, out);
      case STRING -> string(c);
      case STRING_ESCAPE -> stringEscape(c, out);
      default -> throw new IllegalStateException(state.name());
    }
  }

  private void text(char c, StringBuilder out) {
    if (c == ESC) {
      begin(State.ESCAPE);
    } else if (c == C1_CSI) {
      // Parsed like ESC [ but never passed on: the sequence lacks the '[' a kept colour needs.
      begin(State.CSI);
    } else if (c == C1_OSC || c == C1_DCS || c == 0x98 || c == 0x9e || c == 0x9f) {
      begin(State.STRING);
    } else if (c == '\t'
        || c == '\n'
        || c == '\r'
        || (c >= 0x20 && c != 0x7f && (c < 0x80 || c > 0x9f) && !isBidiControl(c))) {
      out.append(c);
    }
    // Any other C0 or C1 control (bell, backspace, shift-in/out, ...) is dropped.
  }

  /**
   * Explicit embeddings, overrides and isolates, which can make text display in another order than
   * it is.
   */
  private static boolean isBidiControl(char c) {
    return (c >= '\u202a' && c <= '\u202e') || (c >= '\u2066' && c <= '\u2069');
  }

  private void escape(char c, StringBuilder out) {
    if (c == '[') {
      sequence.append(c);
      state = State.CSI;
    } else if (c == ']' || c == 'P' || c == 'X' || c == '^' || c == '_') {
      state = State.STRING;
    } else if (c >= 0x20 && c <= 0x2f) {
      state = State.ESCAPE_INTERMEDIATE;
    } else {
      finalOrText(c, out);
    }
  }

  private void escapeIntermediate(char c, StringBuilder out) {
    if (c >= 0x20 && c <= 0x2f) {
      count();
    } else {
      finalOrText(c, out);
    }
  }

  /**
   * Ends an escape sequence at its final character; any other character means it was no escape
   * sequence after all: the ESC is dropped and the character kept.
   */
  private void finalOrText(char c, StringBuilder out) {
    end();
    if (c < 0x30 || c > 0x7e) {
      text(c, out);
    }
  }

  private void csi(char c, StringBuilder out) {
    if (c >= 0x20 && c <= 0x3f) {
      sequence.append(c);
      count();
    } else if (c >= 0x40 && c <= 0x7e) {
      sequence.append(c);
      if (keepColours && c == 'm' && sequence.toString().matches("\u001b\\[[0-9;:]*m")) {
        out.append(sequence);
        coloured = !sequence.toString().matches("\u001b\\[0*m");
      }
      end();
    } else {
      end();
      text(c, out);
    }
  }

  private void string(char c) {
    if (c == BEL || c == C1_ST) {
      end();
    } else if (c == ESC) {
      state = State.STRING_ESCAPE;
    } else {
      count();
    }
  }

  private void stringEscape(char c, StringBuilder out) {
    if (c == '\\') {
      end();
    } else {
      // ESC inside a string ends it and starts a new sequence, as terminals do.
      begin(State.ESCAPE);
      escape(c, out);
    }
  }

  private void begin(State next) {
    sequence.setLength(0);
    sequence.append(ESC);
    length = 1;
    state = next;
  }

  private void count() {
    if (++length > MAX_SEQUENCE) {
      end();
    }
  }

  private void end() {
    sequence.setLength(0);
    length = 0;
    state = State.TEXT;
  }
}
