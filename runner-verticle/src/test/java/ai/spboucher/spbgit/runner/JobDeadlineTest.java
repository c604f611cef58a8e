package ai.spboucher.spbgit.runner;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import org.junit.jupiter.api.Test;

class JobDeadlineTest {

  /** The gateway's clock when it built the request. */
  private static final Instant CREATED = Instant.parse("2026-02-03T10:00:00Z");

  private static final Instant DEADLINE = CREATED.plus(Duration.ofMinutes(11));

  /** The NATS server's clock runs 7 s behind the gateway's. */
  private static final Instant QUEUED = CREATED.minusSeconds(7);

  @Test
  void whatIsLeftIsTheBudgetMinusTheWaitWhateverTheRunnersClockSays() {
    Instant taken = QUEUED.plus(Duration.ofMinutes(4));
    JobDeadline deadline =
        new JobDeadline(DEADLINE.toEpochMilli(), CREATED.toEpochMilli(), QUEUED, taken);
    assertTrue(deadline.measuredOnOneClock());
    for (Duration skew :
        new Duration[] {
          Duration.ZERO, Duration.ofMinutes(2), Duration.ofMinutes(-2), Duration.ofHours(5)
        }) {
      Clock runner = Clock.fixed(CREATED.plus(Duration.ofMinutes(4)).plus(skew), ZoneOffset.UTC);
      assertEquals(
          Duration.ofMinutes(7), deadline.remaining(runner), "runner clock off by " + skew);
    }
  }

  @Test
  void aJobThatWaitedPastItsBudgetHasNoTimeLeftEvenOnALaggingRunner() {
    Instant taken = QUEUED.plus(Duration.ofMinutes(11)).plusSeconds(30);
    JobDeadline deadline =
        new JobDeadline(DEADLINE.toEpochMilli(), CREATED.toEpochMilli(), QUEUED, taken);
    Clock twoMinutesBehind =
        Clock.fixed(DEADLINE.plusSeconds(30).minus(Duration.ofMinutes(2)), ZoneOffset.UTC);
    assertEquals(Duration.ofSeconds(-30), deadline.remaining(twoMinutesBehind));
  }

  @Test
  void withoutTheQueueStampsTheRunnersClockDecides() {
    Clock runner = Clock.fixed(DEADLINE.minusSeconds(90), ZoneOffset.UTC);
    for (JobDeadline deadline :
        new JobDeadline[] {
          new JobDeadline(DEADLINE.toEpochMilli(), 0, QUEUED, QUEUED.plusSeconds(1)),
          new JobDeadline(
              DEADLINE.toEpochMilli(), CREATED.toEpochMilli(), null, QUEUED.plusSeconds(1)),
          new JobDeadline(DEADLINE.toEpochMilli(), CREATED.toEpochMilli(), QUEUED, null)
        }) {
      assertFalse(deadline.measuredOnOneClock());
      assertEquals(Duration.ofSeconds(90), deadline.remaining(runner));
    }
  }

  @Test
  void aServerClockStepBackwardsCountsAsNoWait() {
    JobDeadline deadline =
        new JobDeadline(
            DEADLINE.toEpochMilli(), CREATED.toEpochMilli(), QUEUED, QUEUED.minusSeconds(40));
    assertEquals(Duration.ofMinutes(11), deadline.remaining(Clock.systemUTC()));
  }
}
