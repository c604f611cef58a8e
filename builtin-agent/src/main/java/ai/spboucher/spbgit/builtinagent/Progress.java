package ai.spboucher.spbgit.builtinagent;

import ai.spboucher.spbgit.common.TaskSanitizer;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.json.JsonWriteFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The agent's output: one human-readable {@code [agent]} line per event, and the final
 * machine-readable {@code SPB-AGENT-RESULT} line. Text chosen by the model or the repository is
 * cleaned first (control, bidi and invisible characters escaped or dropped, one line, bounded), so
 * it cannot forge other log lines. Nothing from the environment is ever printed.
 */
public final class Progress {
  public static final String RESULT_PREFIX = "SPB-AGENT-RESULT ";
  private static final ObjectMapper JSON =
      JsonMapper.builder().enable(JsonWriteFeature.ESCAPE_NON_ASCII).build();

  private final PrintStream out;

  public Progress(PrintStream out) {
    this.out = out;
  }

  public void line(String text) {
    out.println("[agent] " + text);
    out.flush();
  }

  /**
   * Prints the result line and, when {@code file} is set, writes the same JSON there for the
   * entrypoint.
   */
  public void result(int steps, boolean finished, String summary, Path file) {
    ObjectNode json = JSON.createObjectNode();
    json.put("steps", steps).put("finished", finished).put("summary", clean(summary, 2000));
    String text;
    try {
      text = JSON.writeValueAsString(json);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException(e);
    }
    out.println(RESULT_PREFIX + text);
    out.flush();
    if (file != null) {
      try {
        Files.writeString(file, text + "\n", StandardCharsets.UTF_8);
      } catch (IOException e) {
        line("could not write the result file: " + e.getMessage());
      }
    }
  }

  /**
   * One printable line of at most {@code max} characters: newlines and controls escaped, invisibles
   * dropped.
   */
  public static String clean(String text, int max) {
    if (text == null) {
      return "";
    }
    StringBuilder out = new StringBuilder();
    text.strip()
        .codePoints()
        .forEach(
            c -> {
              if (c == '\n') {
                out.append("\\n");
              } else if (c == '\t') {
                out.append(' ');
              } else if (c == '\r') {
                out.append("\\r");
              } else if (Character.getType(c) == Character.CONTROL) {
                out.append(String.format("\\x%02x", c));
              } else if (!TaskSanitizer.hidden(c)) {
                out.appendCodePoint(c);
              }
            });
    if (out.length() <= max) {
      return out.toString();
    }
    return out.substring(0, Math.max(0, max - 1)) + "…";
  }
}
