package ai.spboucher.spbgit.gateway.review;

import java.util.Arrays;
import java.util.Locale;
import java.util.Optional;

/**
 * What a job's diff compares its work against. The two differ only for a revision: its own changes
 * are those on top of the work it revised, while what approving it brings is everything since its
 * chain's first job started.
 */
public enum DiffScope {

  /**
   * Against the commit the job's chain of revisions started from (for a job that is no revision,
   * where it started): what approving the work would bring. The default.
   */
  CUMULATIVE,
  /** A revision against the work it revised: what this revision changed. */
  REVISION;

  /** The name in the API ({@code ?scope=}). */
  public String label() {
    return name().toLowerCase(Locale.ROOT);
  }

  /** The scope named by {@code label}, the cumulative one when null; empty for any other name. */
  public static Optional<DiffScope> named(String label) {
    return label == null
        ? Optional.of(CUMULATIVE)
        : Arrays.stream(values()).filter(scope -> scope.label().equals(label)).findFirst();
  }
}
