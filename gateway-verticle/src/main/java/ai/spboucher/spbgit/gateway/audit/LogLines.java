package ai.spboucher.spbgit.gateway.audit;

import ai.spboucher.spbgit.proto.AuditChain;
import java.io.ByteArrayOutputStream;
import java.util.Arrays;
import java.util.List;

/**
 * A log file's bytes cut at each newline: the complete lines (without newline) and what follows the
 * last one.
 */
record LogLines(List<byte[]> complete, byte[] tail) {

  static final byte NEWLINE = '\n';

  static LogLines split(byte[] content) {
    List<byte[]> complete = AuditChain.completeLines(content);
    return new LogLines(
        complete,
        Arrays.copyOfRange(content, (int) AuditChain.completeLength(complete), content.length));
  }

  /** The lines as the file holds them: each complete one with its newline, then the tail. */
  byte[] bytes() {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    for (byte[] line : complete) {
      out.write(line, 0, line.length);
      out.write(NEWLINE);
    }
    out.write(tail, 0, tail.length);
    return out.toByteArray();
  }

  byte[] last() {
    return complete.get(complete.size() - 1);
  }

  /**
   * These lines without a torn last one: without the tail if there is one, else without the last
   * line.
   */
  LogLines withoutTornLine() {
    return tail.length > 0
        ? new LogLines(complete, new byte[0])
        : new LogLines(complete.subList(0, complete.size() - 1), new byte[0]);
  }

  /** Bytes taken by the complete lines, newlines included. */
  long completeLength() {
    return AuditChain.completeLength(complete);
  }
}
