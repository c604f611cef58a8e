package ai.spboucher.spbgit.runner.model;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * Blanks the runner's key wherever a provider quotes it back, also when a stream splits it across
 * chunks: the end of a chunk that could be the start of the key is held back until the next chunk
 * shows whether it is. Only such a tail is held (never more than the key's length less one byte),
 * so a chunk ending in a line break, as every server-sent event does, passes at once.
 *
 * <p>Threading: not thread-safe; one answer's event loop.
 */
final class KeyRedactor {

  static final byte[] MASK = "[redacted]".getBytes(StandardCharsets.US_ASCII);
  private static final byte[] NOTHING = new byte[0];

  private final byte[] key;
  private byte[] held = NOTHING;

  KeyRedactor(byte[] key) {
    this.key = key;
  }

  /** {@code data} with every whole occurrence of {@code key} masked. */
  static byte[] redactAll(byte[] key, byte[] data) {
    KeyRedactor redactor = new KeyRedactor(key);
    byte[] start = redactor.feed(data, 0, data.length);
    byte[] rest = redactor.flush();
    return rest.length == 0 ? start : concat(start, rest);
  }

  /** What of {@code chunk[from, to)} (after what was held) may go out now, redacted. */
  byte[] feed(byte[] chunk, int from, int to) {
    byte[] data = held.length == 0 ? chunk : concat(held, Arrays.copyOfRange(chunk, from, to));
    int start = held.length == 0 ? from : 0;
    int end = held.length == 0 ? to : data.length;
    held = NOTHING;
    ByteArrayOutputStream out = null;
    int copied = start;
    int at = indexOf(data, start, end);
    while (at >= 0) {
      if (out == null) {
        out = new ByteArrayOutputStream(end - start);
      }
      out.write(data, copied, at - copied);
      out.write(MASK, 0, MASK.length);
      copied = at + key.length;
      at = indexOf(data, copied, end);
    }
    int hold = heldTail(data, copied, end);
    held = Arrays.copyOfRange(data, end - hold, end);
    if (out == null) {
      return start == 0 && end - hold == data.length
          ? data
          : Arrays.copyOfRange(data, start, end - hold);
    }
    out.write(data, copied, end - hold - copied);
    return out.toByteArray();
  }

  /** What is still held back: the stream ended, so it cannot be the start of the key. */
  byte[] flush() {
    byte[] rest = held;
    held = NOTHING;
    return rest;
  }

  /** The length of the longest end of {@code data[from, end)} that is a proper start of the key. */
  private int heldTail(byte[] data, int from, int end) {
    // Only a tail starting with the key's first byte can be a start of it: the rest is skipped.
    byte first = key[0];
    for (int start = Math.max(from, end - (key.length - 1)); start < end; start++) {
      if (data[start] == first && Arrays.equals(data, start, end, key, 0, end - start)) {
        return end - start;
      }
    }
    return 0;
  }

  private int indexOf(byte[] data, int from, int end) {
    byte first = key[0];
    for (int i = from, last = end - key.length; i <= last; i++) {
      // The first byte alone rules out almost every position.
      if (data[i] == first && Arrays.equals(data, i, i + key.length, key, 0, key.length)) {
        return i;
      }
    }
    return -1;
  }

  private static byte[] concat(byte[] a, byte[] b) {
    byte[] both = Arrays.copyOf(a, a.length + b.length);
    System.arraycopy(b, 0, both, a.length, b.length);
    return both;
  }
}
