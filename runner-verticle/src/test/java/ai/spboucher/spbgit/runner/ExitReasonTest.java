package ai.spboucher.spbgit.runner;

import static org.junit.jupiter.api.Assertions.assertEquals;

import ai.spboucher.spbgit.runner.ExitReason.Observation;
import org.junit.jupiter.api.Test;

class ExitReasonTest {

  @Test
  void runnerDecisionsComeFirst() {
    assertEquals("cancelled", ExitReason.decide(new Observation(true, true, true, true, 137)));
    assertEquals("timeout", ExitReason.decide(new Observation(false, true, true, true, 137)));
  }

  @Test
  void kernelBreachesBeforeExitCodes() {
    assertEquals("oom", ExitReason.decide(new Observation(false, false, true, false, 137)));
    assertEquals("disk_limit", ExitReason.decide(new Observation(false, false, false, true, 1)));
  }

  @Test
  void aFullDiskWithSuccessIsStillOk() {
    assertEquals("ok", ExitReason.decide(new Observation(false, false, false, true, 0)));
  }

  @Test
  void exitCodes() {
    assertEquals("ok", ExitReason.decide(new Observation(false, false, false, false, 0)));
    assertEquals("exit_code:3", ExitReason.decide(new Observation(false, false, false, false, 3)));
  }
}
