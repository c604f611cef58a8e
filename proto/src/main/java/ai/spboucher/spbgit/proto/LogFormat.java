package ai.spboucher.spbgit.proto;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.logging.ConsoleHandler;
import java.util.logging.Formatter;
import java.util.logging.Handler;
import java.util.logging.LogManager;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

/**
 * How the gateway and the runners write their logs: one line per event, either readable text (default) or,
 * with {@code SPB_LOG_FORMAT=json}, one JSON object per line ({@code ts}, {@code level}, {@code logger},
 * {@code msg}, and {@code error} with the stack trace) for log shippers.
 */
public final class LogFormat {

  private LogFormat() {
  }

  /** Configures java.util.logging (which Vert.x, JGit and jnats log through) from {@code SPB_LOG_FORMAT}. */
  public static void install(String format) {
    if ("json".equalsIgnoreCase(format)) {
      LogManager.getLogManager().reset();
      Handler handler = new ConsoleHandler();
      handler.setFormatter(new JsonLines());
      Logger.getLogger("").addHandler(handler);
    } else if (System.getProperty("java.util.logging.SimpleFormatter.format") == null) {
      System.setProperty("java.util.logging.SimpleFormatter.format", "%1$tFT%1$tT.%1$tLZ %4$s %3$s %5$s%6$s%n");
    }
  }

  /** One JSON object per record. */
  static final class JsonLines extends Formatter {
    @Override
    public String format(LogRecord record) {
      StringBuilder line = new StringBuilder(160).append('{');
      field(line, "ts", record.getInstant().toString()).append(',');
      field(line, "level", record.getLevel().getName()).append(',');
      field(line, "logger", String.valueOf(record.getLoggerName())).append(',');
      field(line, "msg", formatMessage(record));
      if (record.getThrown() != null) {
        StringWriter trace = new StringWriter();
        record.getThrown().printStackTrace(new PrintWriter(trace));
        line.append(',');
        field(line, "error", trace.toString());
      }
      return line.append("}\n").toString();
    }

    private static StringBuilder field(StringBuilder out, String name, String value) {
      out.append('"').append(name).append("\":\"");
      for (int i = 0; i < value.length(); i++) {
        char c = value.charAt(i);
        switch (c) {
          case '"' -> out.append("\\\"");
          case '\\' -> out.append("\\\\");
          case '\n' -> out.append("\\n");
          case '\r' -> out.append("\\r");
          case '\t' -> out.append("\\t");
          default -> {
            if (c < 0x20 || c == 0x2028 || c == 0x2029) {
              out.append(String.format("\\u%04x", (int) c));
            } else {
              out.append(c);
            }
          }
        }
      }
      return out.append('"');
    }
  }
}
