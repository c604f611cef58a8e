package ai.spboucher.spbgit.hooks;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Decides, for a push made with a verified job token, which ref updates may proceed. Shared by the gateway's
 * in-process hook and the stand-alone {@code pre-receive} executable, so both refuse exactly the same pushes.
 */
public final class PushGate {

  /** The decision for one ref: admitted when {@code refusal} is empty. */
  public record Verdict(String refName, Optional<String> refusal) {
    public boolean admitted() {
      return refusal.isEmpty();
    }
  }

  private PushGate() {
  }

  /**
   * @param claims   the verified token
   * @param repo     the repository being pushed to
   * @param refNames the refs the push updates, in the client's order
   * @param atomic   whether the client asked for an all-or-nothing push; one refusal then refuses every ref
   */
  public static List<Verdict> evaluate(JobTokenClaims claims, String repo, List<String> refNames, boolean atomic) {
    List<Verdict> verdicts = new ArrayList<>(refNames.size());
    for (String ref : refNames) {
      Optional<String> refusal = claims.repo().equals(repo)
          ? claims.refScope().refusalFor(ref)
          : Optional.of("job token is scoped to repository " + claims.repo() + ", not " + repo);
      verdicts.add(new Verdict(ref, refusal));
    }
    if (atomic) {
      Optional<Verdict> firstRefused = verdicts.stream().filter(v -> !v.admitted()).findFirst();
      if (firstRefused.isPresent()) {
        String reason = "atomic push refused because " + firstRefused.get().refName() + " is "
            + firstRefused.get().refusal().get();
        verdicts.replaceAll(v -> v.admitted() ? new Verdict(v.refName(), Optional.of(reason)) : v);
      }
    }
    return verdicts;
  }
}
