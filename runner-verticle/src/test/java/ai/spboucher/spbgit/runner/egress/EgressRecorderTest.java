package ai.spboucher.spbgit.runner.egress;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class EgressRecorderTest {

  @Test
  void keepsTheNewestRecordsWithinItsCapacityAndCountsTheDropped() {
    List<EgressRecord> seen = new ArrayList<>();
    EgressRecorder recorder = new EgressRecorder(2, seen::add);
    recorder.record(record(1));
    recorder.record(record(2));
    recorder.record(record(3));
    assertEquals(List.of(record(2), record(3)), recorder.records());
    assertEquals(1, recorder.dropped());
    assertEquals(List.of(record(1), record(2), record(3)), seen);
  }

  @Test
  void aFailingListenerDoesNotLoseTheRecord() {
    EgressRecorder recorder =
        new EgressRecorder(
            record -> {
              throw new IllegalStateException("listener broke");
            });
    recorder.record(record(1));
    assertEquals(List.of(record(1)), recorder.records());
  }

  @Test
  void recordsIsASnapshot() {
    EgressRecorder recorder = new EgressRecorder();
    List<EgressRecord> before = recorder.records();
    recorder.record(record(1));
    assertEquals(List.of(), before);
    assertThrows(UnsupportedOperationException.class, () -> recorder.records().clear());
  }

  @Test
  void targetBracketsIpv6() {
    EgressRecord record =
        new EgressRecord(
            Instant.EPOCH,
            "CONNECT",
            "0:0:0:0:0:0:0:1",
            443,
            false,
            0,
            0,
            Duration.ZERO,
            "not on the allow-list");
    assertEquals("[0:0:0:0:0:0:0:1]:443", record.target());
  }

  private static EgressRecord record(int port) {
    return new EgressRecord(
        Instant.EPOCH, "CONNECT", "a.org", port, true, 1, 2, Duration.ofMillis(3), null);
  }
}
