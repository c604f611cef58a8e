package ai.spboucher.spbgit.common;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.logging.ConsoleHandler;
import java.util.logging.Formatter;
import java.util.logging.Handler;
import java.util.logging.LogManager;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

/**
 * How the gateway and the runners write their logs: one line per event, either readable text
 * (default) or, with {@code SPB_LOG_FORMAT=json}, one JSON object per line ({@code ts}, {@code
 * level}, {@code logger}, {@code msg}, and {@code error} with the stack trace) for log shippers.
 */
public final class LogFormat {

  private LogFormat() {}

  /** The two formats, as {@code SPB_LOG_FORMAT} names them. */
  public enum Kind {
    TEXT,
    JSON;

    /**
     * {@code json} (any case) is {@link #JSON}; anything else, unset included, is {@link #TEXT}.
     */
    public static Kind of(String format) {
      return "json".equalsIgnoreCase(format) ? JSON : TEXT;
    }
  }

  /**
   * Configures java.util.logging (which Vert.x, JGit and jnats log through) to write {@code kind}.
   */
  public static void install(Kind kind) {
    boolean json = kind == Kind.JSON;
    // An operator's own logging configuration wins over the text default.
    if (!json
        && (System.getProperty("java.util.logging.config.file") != null
            || System.getProperty("java.util.logging.SimpleFormatter.format") != null)) {
      return;
    }
    LogManager.getLogManager().reset();
    Handler handler = new ConsoleHandler();
    handler.setFormatter(json ? new JsonLines() : new TextLines());
    Logger.getLogger("").addHandler(handler);
  }

  /**
   * {@code <UTC time> <level> <logger> <message>[ | <stack trace>]} on one line: line breaks and
   * other control characters in a message (which may quote what a client or a job sent) or a stack
   * trace are escaped, so no event spans lines and none can forge another.
   */
  static final class TextLines extends Formatter {
    @Override
    public String format(LogRecord record) {
      StringBuilder line =
          new StringBuilder(160)
              .append(record.getInstant())
              .append(' ')
              .append(record.getLevel().getName())
              .append(' ')
              .append(record.getLoggerName())
              .append(' ');
      escape(line, formatMessage(record), false);
      if (record.getThrown() != null) {
        StringWriter trace = new StringWriter();
        record.getThrown().printStackTrace(new PrintWriter(trace));
        escape(line.append(" | "), trace.toString().stripTrailing(), false);
      }
      return line.append('\n').toString();
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
      return escape(out.append('"').append(name).append("\":\""), value, true).append('"');
    }
  }

  /**
   * Escapes backslashes, every control character (C0, DEL, C1: line breaks, terminal escapes) and
   * the Unicode line separators, JSON style; double quotes too when {@code quotes}.
   */
  private static StringBuilder escape(StringBuilder out, String value, boolean quotes) {
    for (int i = 0; i < value.length(); i++) {
      char c = value.charAt(i);
      switch (c) {
        case '\\' -> out.append("\\\\");
        case '\n' -> out.append("\\n");
        case '\r' -> out.append("\\r");
        case '\t' -> out.append("\\t");
        case '"' -> out.append(quotes ? "\\\"" : "\"");
        default -> {
          if (c < 0x20 || (c >= 0x7f && c <= 0x9f) || c == 0x2028 || c == 0x2029) {
            out.append(String.format("\\u%04x", (int) c));
          } else {
            out.append(c);
          }
        }
      }
    }
    return out;
  }
}
