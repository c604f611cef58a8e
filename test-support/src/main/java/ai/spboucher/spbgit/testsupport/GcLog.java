package ai.spboucher.spbgit.testsupport;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The pauses of a HotSpot GC log written with {@code -Xlog:gc:file=<path>}: how full the heap was
 * before and after each collection. The heap after a full collection is what the process really
 * holds on to; young collections leave garbage in the old generation, so only their peak tells
 * something.
 */
public final class GcLog {

  private static final Pattern PAUSE =
      Pattern.compile("GC\\(\\d+\\) Pause (.*) (\\d+)([KMG])->(\\d+)([KMG])\\((\\d+)([KMG])\\)");

  /**
   * One collection, in bytes.
   *
   * @param kind what the log calls it, e.g. {@code Young (Allocation Failure)} or {@code Full
   *     (System.gc())}
   */
  public record Pause(String kind, long before, long after, long committed) {

    public boolean full() {
      return kind.startsWith("Full");
    }
  }

  private GcLog() {}

  /** Every pause logged so far, oldest first; none when the file does not exist yet. */
  public static List<Pause> pauses(Path file) throws IOException {
    List<Pause> pauses = new ArrayList<>();
    if (!Files.exists(file)) {
      return pauses;
    }
    for (String line : Files.readAllLines(file)) {
      Matcher m = PAUSE.matcher(line);
      if (m.find()) {
        pauses.add(
            new Pause(
                m.group(1),
                bytes(m.group(2), m.group(3)),
                bytes(m.group(4), m.group(5)),
                bytes(m.group(6), m.group(7))));
      }
    }
    return pauses;
  }

  private static long bytes(String n, String unit) {
    long v = Long.parseLong(n);
    return switch (unit) {
      case "K" -> v << 10;
      case "M" -> v << 20;
      default -> v << 30;
    };
  }
}
