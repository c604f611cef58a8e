package ai.spboucher.spbgit.hooks;

import java.util.Optional;
import java.util.regex.Pattern;

/**
 * The ref namespace one job may write: {@code refs/agents/<job>/}. A ref is inside the scope only
 * if it starts with the full prefix including the trailing slash, so job {@code abc} never reaches
 * {@code refs/agents/abcd/x}.
 */
public final class RefScope {

  /**
   * Job ids are lower-case, ref-safe and short; the gateway mints them, tokens are refused if they
   * differ.
   */
  public static final Pattern JOB_ID = Pattern.compile("[a-z0-9][a-z0-9-]{0,63}");

  /**
   * The longest agent ref name, prefix included, in characters. Every client cloning the repository
   * receives every ref name in the ref advertisement, and the audit log keeps the names of refs
   * written for good, so a job's names must stay short; 200 leaves at least 123 characters below
   * the longest job prefix.
   */
  public static final int MAX_REF_LENGTH = 200;

  private static final String AGENT_REFS = "refs/agents/";

  private final String jobId;
  private final String prefix;

  private RefScope(String jobId) {
    this.jobId = jobId;
    this.prefix = AGENT_REFS + jobId + "/";
  }

  /** The scope of one job; fails on a job id that is not ref-safe. */
  public static RefScope forJob(String jobId) {
    if (jobId == null || !JOB_ID.matcher(jobId).matches()) {
      throw new IllegalArgumentException("invalid job id: must match " + JOB_ID.pattern());
    }
    return new RefScope(jobId);
  }

  public String jobId() {
    return jobId;
  }

  /** The prefix every ref of this job starts with, e.g. {@code refs/agents/j1/}. */
  public String prefix() {
    return prefix;
  }

  /** The glob form written into tokens and shown to clients, e.g. {@code refs/agents/j1/*}. */
  public String glob() {
    return prefix + "*";
  }

  /**
   * Why {@code refName} may not be written by this job, or empty when it may. The ref must be a
   * valid git ref name, lie strictly below the job's prefix and be at most {@link #MAX_REF_LENGTH}
   * characters long.
   */
  public Optional<String> refusalFor(String refName) {
    Optional<String> invalid = RefNames.problemWith(refName);
    if (invalid.isPresent()) {
      return Optional.of(invalid.get() + "; job tokens may only push " + glob());
    }
    if (!refName.startsWith(prefix) || refName.length() == prefix.length()) {
      return Optional.of("outside the job's scope; job tokens may only push " + glob());
    }
    if (refName.length() > MAX_REF_LENGTH) {
      // Ends naming the scope like every other refusal, so a client always learns what it may push.
      return Optional.of(
          "ref name is "
              + refName.length()
              + " characters long; job refs may have at most "
              + MAX_REF_LENGTH
              + "; job tokens may only push "
              + glob());
    }
    return Optional.empty();
  }

  /** Whether this job may write {@code refName}. */
  public boolean admitsRef(String refName) {
    return refusalFor(refName).isEmpty();
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof RefScope other && other.jobId.equals(jobId);
  }

  @Override
  public int hashCode() {
    return jobId.hashCode();
  }

  @Override
  public String toString() {
    return glob();
  }
}
