package ai.spboucher.spbgit.gateway.jobs;

import java.util.Arrays;
import java.util.Locale;
import java.util.Optional;

/**
 * The two refs through which a job hands its work back for review, both under {@code
 * refs/agents/<id>/}.
 */
public enum WorkRef {

  /** The finished work: the one the owner may approve. */
  PROPOSAL,
  /**
   * What an llm-mode agent had when a limit (budget, wall clock, steps) or a provider error stopped
   * it: for review only, never approved.
   */
  PARTIAL;

  /**
   * The name in the API ({@code ?ref=}) and the last part of the ref: {@code proposal} or {@code
   * partial}.
   */
  public String label() {
    return name().toLowerCase(Locale.ROOT);
  }

  /** How messages name it: "proposal" or "partial work". */
  public String noun() {
    return this == PROPOSAL ? "proposal" : "partial work";
  }

  /** The full ref of this job's work of this kind, e.g. {@code refs/agents/<id>/partial}. */
  public String refOf(Job job) {
    return job.refPrefix() + label();
  }

  /**
   * The work ref named by {@code label}, the proposal when it is null; empty for any other name.
   */
  public static Optional<WorkRef> named(String label) {
    return label == null
        ? Optional.of(PROPOSAL)
        : Arrays.stream(values()).filter(ref -> ref.label().equals(label)).findFirst();
  }
}
