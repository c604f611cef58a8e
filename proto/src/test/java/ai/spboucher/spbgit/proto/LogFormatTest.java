package ai.spboucher.spbgit.proto;

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
}
