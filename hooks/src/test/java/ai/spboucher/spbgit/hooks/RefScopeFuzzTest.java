package ai.spboucher.spbgit.hooks;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Locale;
import java.util.Optional;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * {@link RefScope} on generated job ids and ref names: whatever the input (traversal, doubled slashes,
 * {@code @{}, look-alike characters, control characters, {@code .lock}, case tricks), a scope admits only refs
 * strictly inside {@code refs/agents/<its job>/}, and two jobs never share a ref.
 */
class RefScopeFuzzTest {

  private static final int TRIES = 5_000;

  /** A job and a ref to offer its scope. */
  record Offer(String job, String ref) {
    @Override
    public String toString() {
      return "job " + Fuzz.show(job) + ", ref " + Fuzz.show(ref);
    }
  }

  @Test
  void admitsOnlyRefsInsideItsOwnNamespace() {
    Fuzz.forAll(
        "RefScope on refs aimed at its job",
        TRIES,
        RefScopeFuzzTest::offer,
        Offer::toString,
        offer -> {
          RefScope scope = RefScope.forJob(offer.job());
          Optional<String> refusal = scope.refusalFor(offer.ref());
          assertEquals(refusal.isEmpty(), scope.admitsRef(offer.ref()));
          if (refusal.isEmpty()) {
            assertTrue(
                GitRefFormat.insideAgentScope(offer.job(), offer.ref()),
                "admitted a ref outside the scope");
          } else {
            assertTrue(
                refusal.get().endsWith("job tokens may only push " + scope.glob()), refusal.get());
            assertTrue(
                refusal.get().chars().noneMatch(c -> c < 0x20 || c == 0x7f),
                Fuzz.show(refusal.get()));
          }
        });
  }

  @Test
  void twoJobsNeverShareARef() {
    Fuzz.forAll(
        "RefScope of two related jobs",
        TRIES,
        RefScopeFuzzTest::offer,
        Offer::toString,
        offer -> {
          RefScope own = RefScope.forJob(offer.job());
          for (String other : relatedJobs(offer.job())) {
            if (!other.equals(offer.job()) && RefScope.JOB_ID.matcher(other).matches()) {
              assertFalse(
                  own.admitsRef(offer.ref()) && RefScope.forJob(other).admitsRef(offer.ref()),
                  "both " + offer.job() + " and " + other + " admit it");
            }
          }
        });
  }

  @Test
  void admitsRefsValidByConstruction() {
    Fuzz.forAll(
        "RefScope on valid refs of its job",
        TRIES / 4,
        random -> {
          String job = RefNameFuzz.jobId(random);
          return new Offer(job, "refs/agents/" + job + "/" + RefNameFuzz.validSuffix(random));
        },
        Offer::toString,
        offer ->
            assertEquals(Optional.empty(), RefScope.forJob(offer.job()).refusalFor(offer.ref())));
  }

  @Test
  void refusesJobIdsThatAreNotRefSafe() {
    Fuzz.forAll(
        "RefScope.forJob on arbitrary ids",
        TRIES,
        RefScopeFuzzTest::candidateJobId,
        Fuzz::show,
        id -> {
          boolean valid =
              id != null
                  && !id.isEmpty()
                  && id.length() <= 64
                  && id.chars()
                      .allMatch(c -> (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')
                  && id.charAt(0) != '-';
          if (valid) {
            assertEquals("refs/agents/" + id + "/*", RefScope.forJob(id).glob());
          } else {
            assertThrows(IllegalArgumentException.class, () -> RefScope.forJob(id));
          }
        });
  }

  private static Offer offer(Random random) {
    String job = RefNameFuzz.jobId(random);
    String ref =
        switch (random.nextInt(4)) {
          case 0 -> RefNameFuzz.arbitrary(random);
          case 1 -> RefNameFuzz.mutated(random, job);
          default -> RefNameFuzz.aimedAt(random, job);
        };
    return new Offer(job, ref);
  }

  private static String[] relatedJobs(String job) {
    return new String[] {
      job + "x",
      job + "-",
      job.substring(0, job.length() - 1),
      "x" + job,
      job.toUpperCase(Locale.ROOT),
      job.replace('a', 'b')
    };
  }

  private static String candidateJobId(Random random) {
    return switch (random.nextInt(6)) {
      case 0 -> null;
      case 1 -> RefNameFuzz.jobId(random);
      case 2 -> {
        String tail = RefNameFuzz.arbitrary(random);
        yield RefNameFuzz.jobId(random) + tail.substring(0, Math.min(3, tail.length()));
      }
      case 3 ->
          RefNameFuzz.jobId(random)
              + RefNameFuzz.LOOK_ALIKES.get(random.nextInt(RefNameFuzz.LOOK_ALIKES.size()));
      case 4 ->
          RefNameFuzz.jobId(random).toUpperCase(Locale.ROOT) + (random.nextBoolean() ? "\n" : "");
      default -> RefNameFuzz.arbitrary(random);
    };
  }
}
