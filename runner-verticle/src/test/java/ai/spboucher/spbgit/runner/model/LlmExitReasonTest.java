package ai.spboucher.spbgit.runner.model;

import static org.junit.jupiter.api.Assertions.assertEquals;

import ai.spboucher.spbgit.runner.ExitReason;
import ai.spboucher.spbgit.runner.ExitReason.Observation;
import org.junit.jupiter.api.Test;

/** How the exit reason of an llm job is decided from the runner's own observations. */
class LlmExitReasonTest {

  static String llm(boolean timedOut, boolean budgetExceeded, long exitCode) {
    return ExitReason.decide(
        new Observation(false, timedOut, budgetExceeded, false, false, exitCode, true));
  }

  @Test
  void theRunnersMeterDecidesBudgetExceededWhateverTheExitCode() {
    assertEquals("budget_exceeded", llm(false, true, 75));
    assertEquals("budget_exceeded", llm(false, true, 0));
    assertEquals("budget_exceeded", llm(false, true, 137));
  }

  @Test
  void aTimeoutWarnedOfStaysATimeout() {
    assertEquals("timeout", llm(true, false, 75));
    assertEquals("timeout", llm(true, true, 75), "the wall clock's breach came first");
  }

  @Test
  void cancelOomAndDiskComeBeforeTheAgentsCodes() {
    assertEquals(
        "cancelled", ExitReason.decide(new Observation(true, false, true, false, false, 75, true)));
    assertEquals(
        "oom", ExitReason.decide(new Observation(false, false, false, true, false, 76, true)));
    assertEquals(
        "disk_limit",
        ExitReason.decide(new Observation(false, false, false, false, true, 77, true)));
  }

  @Test
  void theAgentsCodesNameTheirReasonOnlyInLlmJobs() {
    assertEquals("provider_error", llm(false, false, 76));
    assertEquals("step_limit", llm(false, false, 77));
    assertEquals(
        "exit_code:75", llm(false, false, 75), "75 without the runner's own breach means nothing");
    assertEquals("ok", llm(false, false, 0));
    assertEquals(
        "exit_code:76",
        ExitReason.decide(new Observation(false, false, false, false, 76)),
        "an exec job's command chooses its own codes");
    assertEquals(
        "exit_code:77", ExitReason.decide(new Observation(false, false, false, false, 77)));
  }

  @Test
  void aCodingAgentCliThatFailedOnItsOwnEndsAgentFailedInLlmJobsOnly() {
    assertEquals("agent_failed", llm(false, false, 78));
    assertEquals(
        "exit_code:78", ExitReason.decide(new Observation(false, false, false, false, 78)));
  }
}
