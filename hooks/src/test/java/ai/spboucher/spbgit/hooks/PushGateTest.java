package ai.spboucher.spbgit.hooks;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;

class PushGateTest {

  private static final Instant ISSUED = Instant.parse("2030-01-01T12:00:00Z");
  private static final JobTokenClaims CLAIMS =
      new JobTokenClaims(
          "abc",
          "token-1",
          "demo",
          RefScope.forJob("abc"),
          List.of(JobTokenClaims.PUSH_AGENT_REF),
          ISSUED,
          ISSUED,
          ISSUED.plusSeconds(3600));

  @ParameterizedTest
  @ValueSource(booleans = {true, false})
  void admitsEveryRefInsideTheScope(boolean atomic) {
    List<PushGate.Verdict> verdicts =
        evaluate("demo", List.of("refs/agents/abc/proposal", "refs/agents/abc/x/y"), atomic);

    assertEquals(
        List.of(
            new PushGate.Verdict("refs/agents/abc/proposal", Optional.empty()),
            new PushGate.Verdict("refs/agents/abc/x/y", Optional.empty())),
        verdicts);
  }

  @ParameterizedTest
  @ValueSource(booleans = {true, false})
  void refusesEveryRefOnAnotherRepository(boolean atomic) {
    List<PushGate.Verdict> verdicts =
        evaluate("other", List.of("refs/agents/abc/proposal", "refs/agents/abc/x/y"), atomic);

    assertEquals(2, verdicts.size());
    for (PushGate.Verdict verdict : verdicts) {
      assertFalse(verdict.admitted());
      assertTrue(
          verdict.refusal().get().contains("scoped to repository demo, not other"),
          verdict.refusal()::get);
    }
  }

  @Test
  void atomicPushWithOneRefusalRefusesEveryRefNamingTheRefusedOne() {
    List<PushGate.Verdict> verdicts =
        evaluate(
            "demo",
            List.of("refs/agents/abc/proposal", "refs/heads/main", "refs/agents/abc/other"),
            true);

    assertEquals(
        List.of("refs/agents/abc/proposal", "refs/heads/main", "refs/agents/abc/other"),
        verdicts.stream().map(PushGate.Verdict::refName).toList());
    assertTrue(verdicts.stream().noneMatch(PushGate.Verdict::admitted));
    assertTrue(verdicts.get(1).refusal().get().contains("outside the job's scope"));
    for (int i : new int[] {0, 2}) {
      String reason = verdicts.get(i).refusal().get();
      assertTrue(
          reason.startsWith(
              "atomic push refused because refs/heads/main is outside the job's scope"),
          reason);
    }
  }

  @Test
  void nonAtomicPushRefusesOnlyTheBadRef() {
    List<PushGate.Verdict> verdicts =
        evaluate(
            "demo",
            List.of("refs/agents/abc/proposal", "refs/agents/abcd/x", "refs/agents/abc/other"),
            false);

    assertTrue(verdicts.get(0).admitted());
    assertFalse(verdicts.get(1).admitted());
    assertTrue(verdicts.get(1).refusal().get().contains("outside the job's scope"));
    assertTrue(verdicts.get(2).admitted());
  }

  @Test
  void atomicPushNamesTheFirstRefusedRef() {
    List<PushGate.Verdict> verdicts =
        evaluate("demo", List.of("refs/agents/abc/ok", "refs/tags/v1", "refs/heads/main"), true);

    assertTrue(verdicts.get(0).refusal().get().contains("because refs/tags/v1 is"));
    assertTrue(verdicts.get(2).refusal().get().contains("outside the job's scope"));
  }

  @Test
  void emptyPushHasNoVerdicts() {
    assertEquals(List.of(), evaluate("demo", List.of(), true));
  }

  @Test
  void refusesTheCreationsPastTheRefLimitNamingIt() {
    List<String> refs =
        IntStream.range(0, PushGate.MAX_REFS_PER_JOB + 5)
            .mapToObj(i -> "refs/agents/abc/r" + i)
            .toList();

    List<PushGate.Verdict> verdicts = evaluate("demo", refs, false);

    assertTrue(
        verdicts.subList(0, PushGate.MAX_REFS_PER_JOB).stream()
            .allMatch(PushGate.Verdict::admitted));
    for (PushGate.Verdict refused : verdicts.subList(PushGate.MAX_REFS_PER_JOB, verdicts.size())) {
      assertEquals(
          Optional.of("over the limit of 32 refs per job: refs/agents/abc/ already has 32"),
          refused.refusal());
    }
  }

  @Test
  void countsTheRefsTheJobAlreadyHasAndStillAdmitsUpdatesToThem() {
    Set<String> existing =
        IntStream.range(0, 31).mapToObj(i -> "refs/agents/abc/r" + i).collect(Collectors.toSet());
    List<PushGate.Update> updates =
        List.of(
            commit("refs/agents/abc/r0"),
            commit("refs/agents/abc/new1"),
            commit("refs/agents/abc/new2"),
            new PushGate.Update("refs/agents/abc/r1", RefTarget.DELETION),
            commit("refs/agents/abc/new3"));

    List<PushGate.Verdict> verdicts = PushGate.evaluate(CLAIMS, "demo", updates, existing, false);

    assertEquals(
        List.of(true, true, false, true, false),
        verdicts.stream().map(PushGate.Verdict::admitted).toList());
  }

  @Test
  void refusesMoreThanTheLimitOfWritesInOnePushEvenToExistingRefs() {
    Set<String> existing =
        IntStream.range(0, 40).mapToObj(i -> "refs/agents/abc/r" + i).collect(Collectors.toSet());

    List<PushGate.Verdict> verdicts =
        PushGate.evaluate(
            CLAIMS,
            "demo",
            existing.stream().sorted().map(PushGateTest::commit).toList(),
            existing,
            false);

    assertEquals(
        PushGate.MAX_REFS_PER_JOB, verdicts.stream().filter(PushGate.Verdict::admitted).count());
    assertTrue(
        verdicts.get(39).refusal().get().contains("limit of 32 refs written by one push"),
        verdicts::toString);
  }

  @Test
  void refusesARefNamedTwice() {
    List<PushGate.Verdict> verdicts =
        evaluate("demo", List.of("refs/agents/abc/p", "refs/agents/abc/p"), false);

    assertTrue(verdicts.get(0).admitted());
    assertEquals(Optional.of("named more than once in this push"), verdicts.get(1).refusal());
  }

  @Test
  void refusesRefNamesLongerThanTheLimit() {
    String longest =
        "refs/agents/abc/" + "x".repeat(RefScope.MAX_REF_LENGTH - "refs/agents/abc/".length());

    List<PushGate.Verdict> verdicts = evaluate("demo", List.of(longest, longest + "y"), false);

    assertTrue(verdicts.get(0).admitted());
    assertEquals(
        Optional.of(
            "ref name is 201 characters long; job refs may have at most 200; job tokens may only "
                + "push refs/agents/abc/*"),
        verdicts.get(1).refusal());
  }

  @ParameterizedTest
  @EnumSource(
      value = RefTarget.class,
      names = {"ANNOTATED_TAG", "TREE", "BLOB", "MISSING"})
  void refusesRefsThatWouldNotPointAtACommit(RefTarget target) {
    List<PushGate.Verdict> verdicts =
        PushGate.evaluate(
            CLAIMS,
            "demo",
            List.of(new PushGate.Update("refs/agents/abc/proposal", target)),
            Set.of(),
            false);

    String reason = verdicts.get(0).refusal().orElseThrow();
    assertTrue(
        reason.startsWith(
            "pointed at " + target.description() + "; job refs may only point at commits"),
        reason);
  }

  private static List<PushGate.Verdict> evaluate(String repo, List<String> refs, boolean atomic) {
    return PushGate.evaluate(
        CLAIMS, repo, refs.stream().map(PushGateTest::commit).toList(), Set.of(), atomic);
  }

  private static PushGate.Update commit(String ref) {
    return new PushGate.Update(ref, RefTarget.COMMIT);
  }
}
