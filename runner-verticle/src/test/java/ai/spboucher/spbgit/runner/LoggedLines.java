package ai.spboucher.spbgit.runner;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

/**
 * The messages one class of the gateway or of an in-process runner logs (through {@code
 * java.util.logging}, where {@code System.Logger} goes in tests), so a test can check what the
 * product said about a fault. Holds its logger strongly, since JUL keeps loggers only weakly.
 */
final class LoggedLines extends Handler implements AutoCloseable {

  private final Logger logger;
  private final List<String> messages = new CopyOnWriteArrayList<>();

  private LoggedLines(Class<?> source) {
    this.logger = Logger.getLogger(source.getName());
  }

  static LoggedLines of(Class<?> source) {
    LoggedLines lines = new LoggedLines(source);
    lines.logger.addHandler(lines);
    return lines;
  }

  /** Messages containing every one of {@code parts}. */
  List<String> matching(String... parts) {
    return messages.stream().filter(m -> List.of(parts).stream().allMatch(m::contains)).toList();
  }

  /** Waits until at least {@code count} messages contain every one of {@code parts}. */
  void await(int count, Duration timeout, String... parts) throws Exception {
    JobTestBed.awaitCondition(
        count + " log messages with " + List.of(parts),
        timeout,
        () -> matching(parts).size() >= count);
  }

  @Override
  public void publish(LogRecord record) {
    messages.add(String.valueOf(record.getMessage()));
  }

  @Override
  public void flush() {}

  @Override
  public void close() {
    logger.removeHandler(this);
  }
}
