package ai.spboucher.spbgit.hooks;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * Decides, for a push made with a verified job token, which ref updates may proceed. Shared by the
 * gateway's in-process hook and the stand-alone {@code pre-receive} executable, so both refuse
 * exactly the same pushes.
 *
 * <p>Besides the token's scope it bounds what one job can add to a repository: every clone
 * downloads every ref name, and the audit log keeps every ref written for good. So a job has at
 * most {@link #MAX_REFS_PER_JOB} refs, of at most {@link RefScope#MAX_REF_LENGTH} characters, and
 * each points at a commit.
 */
public final class PushGate {

  /**
   * The most refs a job may have under {@code refs/agents/<job>/} at once, and the most one push
   * may write. A job needs two ({@code proposal}, {@code partial}); the rest is room for an agent's
   * own checkpoints.
   */
  public static final int MAX_REFS_PER_JOB = 32;

  /** The decision for one ref: admitted when {@code refusal} is empty. */
  public record Verdict(String refName, Optional<String> refusal) {
    public boolean admitted() {
      return refusal.isEmpty();
    }
  }

  /** One command of the push: the ref and what it would point at afterwards. */
  public record Update(String refName, RefTarget target) {}

  private PushGate() {}

  /**
   * @param claims the verified token
   * @param repo the repository being pushed to
   * @param updates the ref updates of the push, in the client's order
   * @param existingJobRefs the refs under the job's prefix before the push (other names are
   *     ignored)
   * @param atomic whether the client asked for an all-or-nothing push; one refusal then refuses
   *     every ref
   */
  public static List<Verdict> evaluate(
      JobTokenClaims claims,
      String repo,
      List<Update> updates,
      Set<String> existingJobRefs,
      boolean atomic) {
    String prefix = claims.refScope().prefix();
    // Deleting a ref frees its place only from the next push on: counting within one push stays
    // order-free.
    int refsAfterPush = (int) existingJobRefs.stream().filter(r -> r.startsWith(prefix)).count();
    int writes = 0;
    Set<String> named = new HashSet<>();
    List<Verdict> verdicts = new ArrayList<>(updates.size());
    for (Update update : updates) {
      String ref = update.refName();
      Optional<String> refusal =
          claims.repo().equals(repo)
              ? claims.refScope().refusalFor(ref)
              : Optional.of("job token is scoped to repository " + claims.repo() + ", not " + repo);
      if (refusal.isEmpty() && !named.add(ref)) {
        refusal = Optional.of("named more than once in this push");
      }
      if (refusal.isEmpty()) {
        refusal = targetRefusal(update.target());
      }
      boolean creates = update.target() != RefTarget.DELETION && !existingJobRefs.contains(ref);
      if (refusal.isEmpty() && creates && refsAfterPush >= MAX_REFS_PER_JOB) {
        refusal =
            Optional.of(
                "over the limit of "
                    + MAX_REFS_PER_JOB
                    + " refs per job: "
                    + prefix
                    + " already has "
                    + refsAfterPush);
      } else if (refusal.isEmpty() && writes >= MAX_REFS_PER_JOB) {
        refusal =
            Optional.of(
                "over the limit of "
                    + MAX_REFS_PER_JOB
                    + " refs written by one push with a job token");
      }
      if (refusal.isEmpty()) {
        writes++;
        refsAfterPush += creates ? 1 : 0;
      }
      verdicts.add(new Verdict(ref, refusal));
    }
    if (atomic) {
      refuseAllIfOneIsRefused(verdicts);
    }
    return verdicts;
  }

  /** An atomic push is all or nothing: one refused ref refuses the others, naming it. */
  private static void refuseAllIfOneIsRefused(List<Verdict> verdicts) {
    Optional<Verdict> firstRefused = verdicts.stream().filter(v -> !v.admitted()).findFirst();
    if (firstRefused.isPresent()) {
      String reason =
          "atomic push refused because "
              + firstRefused.get().refName()
              + " is "
              + firstRefused.get().refusal().get();
      verdicts.replaceAll(v -> v.admitted() ? new Verdict(v.refName(), Optional.of(reason)) : v);
    }
  }

  /**
   * Job refs are proposals and checkpoints for review and approval, and approving fast-forwards a
   * branch: only a commit makes sense there. Annotated tags are refused rather than peeled, so the
   * ref written is always exactly the object the gate checked.
   */
  private static Optional<String> targetRefusal(RefTarget target) {
    return switch (target) {
      case COMMIT, DELETION -> Optional.empty();
      case ANNOTATED_TAG ->
          Optional.of(
              "pointed at an annotated tag; job refs may only point at commits "
                  + "(push the commit itself, e.g. <tag>^{commit})");
      default ->
          Optional.of(
              "pointed at " + target.description() + "; job refs may only point at commits");
    };
  }
}
