package ai.spboucher.spbgit.hooks;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Instant;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class PushGateTest {

  private static final Instant ISSUED = Instant.parse("2030-01-01T12:00:00Z");
  private static final JobTokenClaims CLAIMS = new JobTokenClaims("abc", "token-1", "demo", RefScope.forJob("abc"),
      List.of(JobTokenClaims.PUSH_AGENT_REF), ISSUED, ISSUED, ISSUED.plusSeconds(3600));

  @ParameterizedTest
  @ValueSource(booleans = {true, false})
  void admitsEveryRefInsideTheScope(boolean atomic) {
    List<PushGate.Verdict> verdicts = PushGate.evaluate(CLAIMS, "demo",
        List.of("refs/agents/abc/proposal", "refs/agents/abc/x/y"), atomic);

    assertEquals(List.of(new PushGate.Verdict("refs/agents/abc/proposal", Optional.empty()),
        new PushGate.Verdict("refs/agents/abc/x/y", Optional.empty())), verdicts);
  }

  @ParameterizedTest
  @ValueSource(booleans = {true, false})
  void refusesEveryRefOnAnotherRepository(boolean atomic) {
    List<PushGate.Verdict> verdicts = PushGate.evaluate(CLAIMS, "other",
        List.of("refs/agents/abc/proposal", "refs/agents/abc/x/y"), atomic);

    assertEquals(2, verdicts.size());
    for (PushGate.Verdict verdict : verdicts) {
      assertFalse(verdict.admitted());
      assertTrue(verdict.refusal().get().contains("scoped to repository demo, not other"), verdict.refusal()::get);
    }
  }

  @Test
  void atomicPushWithOneRefusalRefusesEveryRefNamingTheRefusedOne() {
    List<PushGate.Verdict> verdicts = PushGate.evaluate(CLAIMS, "demo",
        List.of("refs/agents/abc/proposal", "refs/heads/main", "refs/agents/abc/other"), true);

    assertEquals(List.of("refs/agents/abc/proposal", "refs/heads/main", "refs/agents/abc/other"),
        verdicts.stream().map(PushGate.Verdict::refName).toList());
    assertTrue(verdicts.stream().noneMatch(PushGate.Verdict::admitted));
    assertTrue(verdicts.get(1).refusal().get().contains("outside the job's scope"));
    for (int i : new int[] {0, 2}) {
      String reason = verdicts.get(i).refusal().get();
      assertTrue(reason.startsWith("atomic push refused because refs/heads/main is outside the job's scope"), reason);
    }
  }

  @Test
  void nonAtomicPushRefusesOnlyTheBadRef() {
    List<PushGate.Verdict> verdicts = PushGate.evaluate(CLAIMS, "demo",
        List.of("refs/agents/abc/proposal", "refs/agents/abcd/x", "refs/agents/abc/other"), false);

    assertTrue(verdicts.get(0).admitted());
    assertFalse(verdicts.get(1).admitted());
    assertTrue(verdicts.get(1).refusal().get().contains("outside the job's scope"));
    assertTrue(verdicts.get(2).admitted());
  }

  @Test
  void atomicPushNamesTheFirstRefusedRef() {
    List<PushGate.Verdict> verdicts = PushGate.evaluate(CLAIMS, "demo",
        List.of("refs/agents/abc/ok", "refs/tags/v1", "refs/heads/main"), true);

    assertTrue(verdicts.get(0).refusal().get().contains("because refs/tags/v1 is"));
    assertTrue(verdicts.get(2).refusal().get().contains("outside the job's scope"));
  }

  @Test
  void emptyPushHasNoVerdicts() {
    assertEquals(List.of(), PushGate.evaluate(CLAIMS, "demo", List.of(), true));
  }
}
