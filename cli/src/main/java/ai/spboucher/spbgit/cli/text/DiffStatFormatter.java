package ai.spboucher.spbgit.cli.text;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;

/**
 * A {@code git diff --stat} style summary of the gateway's diff JSON ({@code files} with
 * additions/deletions).
 */
public final class DiffStatFormatter {

  private static final int BAR_WIDTH = 40;

  private DiffStatFormatter() {}

  /** The stat lines, one per file and a summary line, each ending with a newline. */
  public static String render(JsonNode diff) {
    List<String[]> rows = new ArrayList<>();
    long insertions = 0;
    long deletions = 0;
    int maxChanges = 0;
    for (JsonNode file : diff.path("files")) {
      int added = file.path("additions").asInt();
      int removed = file.path("deletions").asInt();
      insertions += added;
      deletions += removed;
      maxChanges = Math.max(maxChanges, added + removed);
    }
    int nameWidth = 0;
    for (JsonNode file : diff.path("files")) {
      String name = name(file);
      nameWidth = Math.max(nameWidth, name.length());
      rows.add(
          new String[] {
            name,
            file.path("binary").asBoolean()
                ? "Bin"
                : changes(
                    file.path("additions").asInt(), file.path("deletions").asInt(), maxChanges)
          });
    }
    StringBuilder out = new StringBuilder();
    for (String[] row : rows) {
      out.append(' ').append(pad(row[0], nameWidth)).append(" | ").append(row[1]).append('\n');
    }
    int files = rows.size();
    out.append(' ').append(files).append(files == 1 ? " file changed" : " files changed");
    if (insertions > 0 || deletions == 0) {
      out.append(", ")
          .append(insertions)
          .append(insertions == 1 ? " insertion(+)" : " insertions(+)");
    }
    if (deletions > 0) {
      out.append(", ").append(deletions).append(deletions == 1 ? " deletion(-)" : " deletions(-)");
    }
    if (diff.path("truncated").asBoolean()) {
      out.append(" (the gateway truncated this diff)");
    }
    return out.append('\n').toString();
  }

  private static String name(JsonNode file) {
    String path = AnsiFilter.plain(file.path("path").asText());
    String old =
        file.path("old_path").isTextual() ? AnsiFilter.plain(file.path("old_path").asText()) : null;
    return "RENAME".equals(file.path("change").asText()) && old != null && !old.equals(path)
        ? old + " => " + path
        : path;
  }

  private static String changes(int added, int removed, int maxChanges) {
    int total = added + removed;
    int plus = added;
    int minus = removed;
    if (maxChanges > BAR_WIDTH) {
      plus = scale(added, maxChanges);
      minus = scale(removed, maxChanges);
    }
    return total + (total == 0 ? "" : " " + "+".repeat(plus) + "-".repeat(minus));
  }

  /** At least one mark for any change, as git does. */
  private static int scale(int count, int max) {
    return count == 0 ? 0 : Math.max(1, (int) ((long) count * BAR_WIDTH / max));
  }

  private static String pad(String s, int width) {
    return s + " ".repeat(Math.max(0, width - s.length()));
  }
}
