package ai.spboucher.spbgit.runner.model;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class TokenMeterTest {

  @Test
  void isExhaustedOnceTheSpendReachesTheBudget() {
    TokenMeter meter = new TokenMeter(100);
    meter.add(new Usage(60, 39));
    assertFalse(meter.exhausted());
    assertFalse(meter.exhaustion().isDone());
    meter.add(new Usage(0, 1));
    assertTrue(meter.exhausted());
    assertEquals(new Usage(60, 40), meter.exhaustion().join());
  }

  @Test
  void signalsExhaustionOnceWithTheSpendThatReachedIt() {
    TokenMeter meter = new TokenMeter(10);
    AtomicInteger signals = new AtomicInteger();
    meter.exhaustion().thenRun(signals::incrementAndGet);
    meter.add(new Usage(20, 0));
    meter.add(new Usage(5, 5));
    assertEquals(1, signals.get());
    assertEquals(new Usage(20, 0), meter.exhaustion().join());
    assertEquals(new Usage(25, 5), meter.spent());
  }

  @Test
  void exhaustionCannotBeCompletedByAListener() {
    TokenMeter meter = new TokenMeter(10);
    CompletableFuture<Usage> view = meter.exhaustion();
    view.complete(Usage.NONE);
    assertFalse(meter.exhaustion().isDone(), "callers get a copy, not the meter's own future");
  }

  @Test
  void addsFromManyThreadsWithoutLosingTokens() throws Exception {
    TokenMeter meter = new TokenMeter(1_000_000_000);
    CountDownLatch go = new CountDownLatch(1);
    List<Thread> threads = new ArrayList<>();
    for (int t = 0; t < 8; t++) {
      Thread thread =
          new Thread(
              () -> {
                try {
                  go.await();
                } catch (InterruptedException e) {
                  return;
                }
                for (int i = 0; i < 10_000; i++) {
                  meter.add(new Usage(2, 1));
                }
              });
      thread.start();
      threads.add(thread);
    }
    go.countDown();
    for (Thread thread : threads) {
      thread.join();
    }
    assertEquals(new Usage(160_000, 80_000), meter.spent());
  }

  @Test
  void aClaimSettlesOnceAndTellsEveryLaterSettleWhatWasCounted() {
    TokenMeter meter = new TokenMeter(1_000);
    TokenMeter.Claim claim = meter.claim(50);

    assertEquals(new Usage(300, 20), claim.settle(new Usage(300, 20)));
    assertEquals(
        new Usage(300, 20),
        claim.settle(new Usage(13, 0)),
        "a later settle (an estimate after the agent left) changes nothing and says so");
    assertEquals(new Usage(300, 20), meter.spent());
    assertEquals(0, meter.claimed());
  }

  @Test
  void refusesANonPositiveBudgetAndNegativeUsage() {
    assertThrows(IllegalArgumentException.class, () -> new TokenMeter(0));
    assertThrows(IllegalArgumentException.class, () -> new Usage(-1, 0));
  }
}
