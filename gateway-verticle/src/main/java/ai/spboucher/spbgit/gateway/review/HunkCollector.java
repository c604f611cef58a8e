package ai.spboucher.spbgit.gateway.review;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;

/**
 * Turns one file's unified diff, as JGit's {@code DiffFormatter} writes it, into hunks of typed,
 * numbered lines, line by line as it is written. Once it has shown its line budget it stops the
 * formatter by throwing {@link Full}, so a huge file is never formatted past what is shown.
 *
 * <p>Threading: one instance per file, on the computing thread.
 */
final class HunkCollector extends OutputStream {

  /**
   * The line budget is spent; thrown through the formatter, which has nothing left to write that is
   * shown.
   */
  static final class Full extends IOException {
    Full() {
      super("the line budget is spent", null);
    }
  }

  private final int budget;
  private final ByteArrayOutputStream line = new ByteArrayOutputStream();
  private final JsonArray hunks = new JsonArray();
  private JsonObject hunk;
  private int shown;
  private boolean binary;
  private boolean truncated;
  private int oldLine;
  private int newLine;

  HunkCollector(int budget) {
    this.budget = budget;
  }

  @Override
  public void write(int b) throws IOException {
    if (b == '\n') {
      endLine();
    } else {
      line.write(b);
    }
  }

  @Override
  public void write(byte[] b, int off, int len) throws IOException {
    int start = off;
    for (int i = off; i < off + len; i++) {
      if (b[i] == '\n') {
        line.write(b, start, i - start);
        endLine();
        start = i + 1;
      }
    }
    line.write(b, start, off + len - start);
  }

  private void endLine() throws IOException {
    String text = line.toString(StandardCharsets.UTF_8);
    line.reset();
    if (text.startsWith("Binary files")) {
      binary = true;
    } else if (text.startsWith("@@")) {
      int[] starts = FileDiffs.hunkStarts(text);
      oldLine = starts[0];
      newLine = starts[1];
      hunk = new JsonObject().put("header", text).put("lines", new JsonArray());
      hunks.add(hunk);
    } else if (hunk != null && !text.isEmpty() && "+- ".indexOf(text.charAt(0)) >= 0) {
      if (shown >= budget) {
        truncated = true;
        throw new Full();
      }
      shown++;
      JsonObject l = new JsonObject().put("text", text.substring(1));
      switch (text.charAt(0)) {
        case '+' -> l.put("type", "add").putNull("old").put("new", newLine++);
        case '-' -> l.put("type", "del").put("old", oldLine++).putNull("new");
        default -> l.put("type", "context").put("old", oldLine++).put("new", newLine++);
      }
      hunk.getJsonArray("lines").add(l);
    }
  }

  JsonArray hunks() {
    return hunks;
  }

  int shown() {
    return shown;
  }

  boolean binary() {
    return binary;
  }

  boolean truncated() {
    return truncated;
  }
}
