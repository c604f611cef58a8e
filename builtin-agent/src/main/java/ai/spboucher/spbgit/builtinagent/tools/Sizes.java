package ai.spboucher.spbgit.builtinagent.tools;

import java.util.Locale;

/** Byte counts for people: "312 B", "2.1 KiB", "1.4 MiB". */
final class Sizes {
  private Sizes() {}

  static String human(long bytes) {
    if (bytes < 1024) {
      return bytes + " B";
    }
    if (bytes < 1024 * 1024) {
      return String.format(Locale.ROOT, "%.1f KiB", bytes / 1024.0);
    }
    return String.format(Locale.ROOT, "%.1f MiB", bytes / (1024.0 * 1024));
  }
}
