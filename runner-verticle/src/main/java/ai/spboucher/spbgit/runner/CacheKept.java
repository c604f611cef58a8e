package ai.spboucher.spbgit.runner;

/**
 * What became of a setup's cache paths ({@link JobCache#keep}): kept as a tar of {@code bytes}, or
 * not, and why. Not keeping never fails the job: its setup succeeded, only the next job of the
 * repository runs setup again.
 *
 * @param kept whether a tar is now kept for the key
 * @param bytes the tar's size when kept; when over a limit, what it would have been (counted before
 *     anything was written); otherwise 0
 * @param overLimit by how many bytes {@code bytes} passed the limit; 0 unless it did
 * @param why empty when kept; otherwise a sentence for the job's log, starting {@code not cached:}
 */
record CacheKept(boolean kept, long bytes, long overLimit, String why) {

  static CacheKept kept(long bytes) {
    return new CacheKept(true, bytes, 0, "");
  }

  /**
   * Not kept: the tar would hold {@code counted} bytes, more than {@code limit} ({@code
   * SPB_CACHE_ENTRY_SIZE}); {@code complete} is false when the count stopped early (so {@code
   * counted} is a lower bound).
   */
  static CacheKept overLimit(long counted, long limit, boolean complete) {
    long over = counted - limit;
    return new CacheKept(
        false,
        counted,
        over,
        "not cached: "
            + over
            + " bytes over the limit (SPB_CACHE_ENTRY_SIZE, "
            + limit
            + " bytes"
            + (complete ? "" : "; at least: the count stopped at more entries than fit")
            + ")");
  }

  /** Not kept, for a reason other than its size: {@code reason} completes "not cached: ". */
  static CacheKept notKept(String reason) {
    return new CacheKept(false, 0, 0, "not cached: " + reason);
  }

  /** For the job's log, after {@code cache <key> }: {@code kept (N bytes)} or {@link #why}. */
  String describe() {
    return kept ? "kept (" + bytes + " bytes)" : why;
  }
}
