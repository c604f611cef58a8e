package ai.spboucher.spbgit.gateway.review;

import java.time.Duration;

/**
 * What computing one proposal diff may cost the gateway. Past any of these the answer still comes,
 * shorter: a file too big is listed without its hunks, lines past {@code maxLines} and files past
 * {@code maxFiles} are cut, and a diff that runs out of {@code time} is answered "too large to show
 * here".
 *
 * @param time wall-clock time for one diff, rename detection and every file's text diff included
 * @param maxFileBytes the largest blob (either side) whose text is diffed; a bigger file is listed
 *     as too large
 * @param maxFiles files listed
 * @param maxLines hunk lines shown, over all files
 * @param renameLimit the most added or deleted files compared pairwise for renames; more skip
 *     content renames
 */
public record DiffBudget(
    Duration time, long maxFileBytes, int maxFiles, int maxLines, int renameLimit) {

  public static final Duration DEFAULT_TIME = Duration.ofSeconds(3);
  public static final long DEFAULT_MAX_FILE_BYTES = 1L << 20;
  public static final int DEFAULT_MAX_FILES = 300;
  public static final int DEFAULT_MAX_LINES = 20_000;
  public static final int DEFAULT_RENAME_LIMIT = 100;

  public DiffBudget {
    if (time.isNegative() || time.isZero()) {
      throw new IllegalArgumentException("the diff time budget must be positive, got " + time);
    }
  }

  /** The default budget with {@code time} (from {@code SPB_DIFF_TIME_BUDGET}) for the clock. */
  public static DiffBudget withTime(Duration time) {
    return new DiffBudget(
        time, DEFAULT_MAX_FILE_BYTES, DEFAULT_MAX_FILES, DEFAULT_MAX_LINES, DEFAULT_RENAME_LIMIT);
  }
}
