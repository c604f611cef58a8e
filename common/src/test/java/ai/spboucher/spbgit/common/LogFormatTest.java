package ai.spboucher.spbgit.common;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.logging.Level;
import java.util.logging.LogRecord;
import org.junit.jupiter.api.Test;

class LogFormatTest {

  @Test
  void oneJsonObjectPerEventEvenForMultiLineMessagesAndErrors() {
    LogRecord record = new LogRecord(Level.WARNING, "job \"x\" failed\nsecond line\u2028");
    record.setLoggerName("ai.spboucher.spbgit.Test");
    record.setThrown(new IllegalStateException("boom"));
    String line = new LogFormat.JsonLines().format(record);
    assertTrue(line.endsWith("}\n"));
    assertEquals(1, line.split("\n", -1).length - 1, "exactly one line: " + line);
    assertTrue(line.contains("\"level\":\"WARNING\""), line);
    assertTrue(line.contains("\"msg\":\"job \\\"x\\\" failed\\nsecond line\\u2028\""), line);
    assertTrue(line.contains("\"error\":\"java.lang.IllegalStateException: boom\\n"), line);
  }

  @Test
  void oneTextLinePerEventSoNoMessageCanForgeAnother() {
    LogRecord record =
        new LogRecord(
            Level.INFO, "refused repo \"x\"\n2026-01-01T00:00:00Z INFO forged\u001b[2J\u0085");
    record.setLoggerName("ai.spboucher.spbgit.Test");
    record.setInstant(java.time.Instant.parse("2026-11-30T04:05:06.789Z"));
    record.setThrown(new IllegalStateException("boom"));
    String line = new LogFormat.TextLines().format(record);
    assertEquals(1, line.split("\n", -1).length - 1, "exactly one line: " + line);
    assertTrue(
        line.startsWith(
            "2026-11-30T04:05:06.789Z INFO ai.spboucher.spbgit.Test refused repo \"x\"\\n2026"),
        line);
    assertTrue(
        line.contains("forged\\u001b[2J\\u0085 | java.lang.IllegalStateException: boom\\n\\tat "),
        line);
  }
}
