package ai.spboucher.spbgit.runner;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.spboucher.spbgit.proto.JobEvent;
import ai.spboucher.spbgit.proto.Subjects;
import io.nats.client.Connection;
import io.nats.client.JetStreamApiException;
import io.nats.client.Nats;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Checks the host-fault tests share: reading a running job's progress, and counting numbered output lines. */
final class FaultChecks {

  private FaultChecks() {
  }

  /**
   * The sequence of the job's last log chunk in the stream, or 0 before the first: a running job's progress,
   * read without waiting for its log to end (which {@link JobTestBed#log} does).
   */
  static long lastLogChunk(String natsUrl, String jobId) throws Exception {
    try (Connection connection = Nats.connect(natsUrl)) {
      return JobEvent.parseFrom(connection.jetStreamManagement()
          .getLastMessage(Subjects.EVENTS_STREAM, Subjects.logEvents(jobId)).getData()).getSequence();
    } catch (JetStreamApiException e) {
      return 0;
    }
  }

  /**
   * Asserts that the lines {@code <prefix><n>} in {@code log} count 1, 2, 3, ... each exactly once and in order,
   * and that there are at least {@code atLeast}; returns how many there are.
   */
  static int assertNumberedLinesOnce(String log, String prefix, int atLeast) {
    Matcher lines = Pattern.compile("(?m)^" + Pattern.quote(prefix) + "(\\d+)$").matcher(log);
    int expected = 1;
    while (lines.find()) {
      assertEquals(expected++, Integer.parseInt(lines.group(1)), "'" + prefix + "' lines in order, none lost or "
          + "repeated");
    }
    assertTrue(expected - 1 >= atLeast, "at least " + atLeast + " '" + prefix + "' lines in the log:\n" + log);
    return expected - 1;
  }
}
