package ai.spboucher.spbgit.runner.model;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * Reads server-sent events out of a byte stream as it passes, whatever the chunks it arrives in: a
 * line, a CRLF or a UTF-8 character may be split anywhere. Only {@code event:} and {@code data:}
 * fields are kept (several data lines joined by LF, as the SSE specification says); an event is
 * complete at its blank line. An event larger than {@link #MAX_EVENT_BYTES} is passed on, never
 * read.
 *
 * <p>Threading: not thread-safe; one stream's event loop.
 */
final class SseScanner {

  /** Called with each complete event. */
  interface Listener {
    /**
     * @param event the event's name, or empty
     * @param data its data lines
     * @param end the offset in the chunk just past the event's blank line
     */
    void onEvent(String event, String data, int end);
  }

  static final int MAX_EVENT_BYTES = 16 << 20;

  private static final byte[] DATA = "data".getBytes(StandardCharsets.US_ASCII);
  private static final byte[] EVENT = "event".getBytes(StandardCharsets.US_ASCII);

  private final LineBuffer line = new LineBuffer();
  private final StringBuilder data = new StringBuilder();

  /** The event's only data line so far; {@link #data} holds them all once there are two. */
  private String firstData = "";

  private String event = "";
  private boolean hasData;
  private boolean afterCr;
  private long eventBytes;
  private boolean oversized;
  private boolean stopped;
  private int stoppedAt;

  /** Whether the stream stopped in the middle of an event (no blank line yet after its fields). */
  boolean midEvent() {
    return line.size() > 0 || hasData || !event.isEmpty() || oversized;
  }

  /**
   * Scans {@code chunk[from, to)}; stops early, at the end of an event, when the listener asks by
   * {@link #stop()}.
   *
   * @return the offset where scanning stopped
   */
  int scan(byte[] chunk, int from, int to, Listener listener) {
    stopped = false;
    int i = from;
    while (i < to && !stopped) {
      if (afterCr) {
        afterCr = false;
        if (chunk[i] == '\n') {
          i++;
          continue;
        }
      }
      int end = i;
      while (end < to && chunk[end] != '\n' && chunk[end] != '\r') {
        end++;
      }
      keep(chunk, i, end);
      if (end == to) {
        return to;
      }
      afterCr = chunk[end] == '\r';
      i = end + 1;
      endLine(listener, i);
    }
    return stopped ? stoppedAt : to;
  }

  /** Keeps a piece of the current line, unless its event already passed the limit. */
  private void keep(byte[] chunk, int from, int to) {
    eventBytes += to - from;
    if (eventBytes > MAX_EVENT_BYTES) {
      oversized = true;
    } else if (!oversized) {
      line.write(chunk, from, to - from);
    }
  }

  /** Called from {@link Listener#onEvent}: scanning stops right after that event. */
  void stop() {
    stopped = true;
  }

  private void endLine(Listener listener, int end) {
    if (line.size() == 0 && !oversized) {
      if (hasData || !event.isEmpty()) {
        String name = event;
        String joined = data.length() == 0 ? firstData : data.toString();
        resetEvent();
        stoppedAt = end;
        listener.onEvent(name, joined, end);
      } else {
        resetEvent();
      }
      return;
    }
    if (oversized) {
      if (line.size() == 0) {
        resetEvent();
      }
      line.reset();
      return;
    }
    // The field's name is ASCII and a colon is never part of a UTF-8 sequence: the name is
    // compared as bytes and only the value decoded, one string a line.
    boolean isData = line.isField(DATA);
    boolean isEvent = !isData && line.isField(EVENT);
    if (isData || isEvent) {
      String value = line.value(isData ? DATA.length : EVENT.length);
      if (isEvent) {
        event = value;
      } else if (!hasData) {
        firstData = value;
        hasData = true;
      } else {
        if (data.length() == 0) {
          data.append(firstData);
        }
        data.append('\n').append(value);
      }
    }
    line.reset();
  }

  /** The bytes of the line so far: ByteArrayOutputStream's synchronisation costs per event. */
  private static final class LineBuffer {
    private byte[] bytes = new byte[512];
    private int size;

    void write(byte[] from, int offset, int length) {
      if (size + length > bytes.length) {
        bytes = Arrays.copyOf(bytes, Math.max(bytes.length * 2, size + length));
      }
      System.arraycopy(from, offset, bytes, size, length);
      size += length;
    }

    int size() {
      return size;
    }

    void reset() {
      size = 0;
    }

    /** Whether the line is the field {@code name}: the name alone, or followed by a colon. */
    boolean isField(byte[] name) {
      return (size == name.length || size > name.length && bytes[name.length] == ':')
          && Arrays.equals(bytes, 0, name.length, name, 0, name.length);
    }

    /** The value of a field named by the first {@code nameLength} bytes (one leading space off). */
    String value(int nameLength) {
      int from = Math.min(size, nameLength + 1);
      if (from < size && bytes[from] == ' ') {
        from++;
      }
      return new String(bytes, from, size - from, StandardCharsets.UTF_8);
    }
  }

  private void resetEvent() {
    event = "";
    data.setLength(0);
    firstData = "";
    hasData = false;
    eventBytes = 0;
    oversized = false;
  }
}
