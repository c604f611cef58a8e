package ai.spboucher.spbgit.hooks;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Optional;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * {@link RefNames} on generated names: it never throws, never accepts a name git's rules refuse
 * ({@link GitRefFormat}), names the broken rule without echoing control characters, and still
 * accepts names that are valid by construction. {@link RefNamesGitOracleIT} checks a sample against
 * the real git.
 */
class RefNamesFuzzTest {

  private static final int TRIES = 20_000;

  @Test
  void acceptsNoArbitraryNameGitRefuses() {
    Fuzz.forAll(
        "RefNames on arbitrary names",
        TRIES,
        RefNameFuzz::arbitrary,
        Fuzz::show,
        RefNamesFuzzTest::acceptsOnlyWhatGitAccepts);
  }

  @Test
  void acceptsNoMutatedNameGitRefuses() {
    Fuzz.forAll(
        "RefNames on mutated valid names",
        TRIES,
        random -> RefNameFuzz.mutated(random, RefNameFuzz.jobId(random)),
        Fuzz::show,
        RefNamesFuzzTest::acceptsOnlyWhatGitAccepts);
  }

  @Test
  void acceptsNoNameAimedAtAJobThatGitRefuses() {
    Fuzz.forAll(
        "RefNames on names aimed at a job",
        TRIES,
        random -> RefNameFuzz.aimedAt(random, RefNameFuzz.jobId(random)),
        Fuzz::show,
        RefNamesFuzzTest::acceptsOnlyWhatGitAccepts);
  }

  @Test
  void acceptsNamesValidByConstruction() {
    Fuzz.forAll(
        "RefNames on valid names",
        TRIES / 4,
        RefNamesFuzzTest::validName,
        Fuzz::show,
        name -> {
          assertTrue(GitRefFormat.accepts(name), "the generator made a name git refuses");
          assertEquals(Optional.empty(), RefNames.problemWith(name));
        });
  }

  private static String validName(Random random) {
    return random.nextBoolean()
        ? RefNameFuzz.valid(random, RefNameFuzz.jobId(random))
        : "refs/agents/" + RefNameFuzz.jobId(random) + "/" + RefNameFuzz.validSuffix(random);
  }

  static void acceptsOnlyWhatGitAccepts(String name) {
    Optional<String> problem = RefNames.problemWith(name);
    assertNotNull(problem);
    if (problem.isEmpty()) {
      assertTrue(GitRefFormat.accepts(name), "accepted a name git's rules refuse");
      assertTrue(name.startsWith("refs/"), "accepted a name outside refs/");
    } else {
      assertFalse(problem.get().isBlank());
      assertTrue(
          problem.get().chars().noneMatch(c -> c < 0x20 || c == 0x7f),
          "the refusal carries a control character: " + Fuzz.show(problem.get()));
    }
  }
}
