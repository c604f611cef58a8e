package ai.spboucher.spbgit.gateway.audit;

import static ai.spboucher.spbgit.gateway.audit.LogLines.NEWLINE;

import ai.spboucher.spbgit.proto.AuditChain;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Clock;
import java.util.Arrays;

/**
 * The crash repair of {@link AuditLog#open}: finding a torn last line (no trailing newline, or not
 * a JSON object), moving its bytes to a side file {@code <log>.torn-<epochMillis>}, and the entry
 * that records the repair in the chain. Blocking.
 */
final class TornLine {

  private static final System.Logger LOG = System.getLogger(AuditLog.class.getName());

  private TornLine() {}

  /**
   * The torn last line's exact bytes (with its newline, if it had one), or null when the last line
   * is sound.
   */
  static byte[] of(LogLines content) {
    if (content.tail().length > 0) {
      return content.tail();
    }
    if (!content.complete().isEmpty() && !AuditChain.isObject(content.last())) {
      byte[] last = content.last();
      byte[] torn = Arrays.copyOf(last, last.length + 1);
      torn[last.length] = NEWLINE;
      return torn;
    }
    return null;
  }

  /**
   * Copies the torn line's bytes to a new side file and fsyncs it, and only then truncates the log
   * to {@code kept}; returns the entry that records the repair.
   */
  static JsonObject setAside(
      Path file, Clock clock, FileChannel channel, LogLines kept, byte[] torn) throws IOException {
    Path side = writeSideFile(file, clock, torn);
    channel.truncate(kept.completeLength());
    channel.force(true);
    LOG.log(
        System.Logger.Level.WARNING,
        "audit log "
            + file
            + " ended with a torn line ("
            + torn.length
            + " bytes, as a crash mid-append leaves); moved it to "
            + side
            + ", truncated the log after line "
            + kept.complete().size()
            + " and recorded the repair as line "
            + (kept.complete().size() + 1));
    return new JsonObject()
        .put("event", AuditLog.TORN_LINE_SET_ASIDE)
        .put("file", side.getFileName().toString())
        .put("bytes", torn.length)
        .put("sha256", AuditChain.hash(torn))
        .put(
            "why",
            torn[torn.length - 1] == NEWLINE
                ? "the last line is not a JSON object"
                : "the last line has no trailing newline");
  }

  private static Path writeSideFile(Path file, Clock clock, byte[] bytes) throws IOException {
    String base = file.getFileName() + ".torn-" + clock.millis();
    Path side = file.toAbsolutePath().resolveSibling(base);
    for (int attempt = 2; ; attempt++) {
      try (FileChannel out =
          FileChannel.open(side, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
        ByteBuffer buffer = ByteBuffer.wrap(bytes);
        while (buffer.hasRemaining()) {
          out.write(buffer);
        }
        out.force(true);
        break;
      } catch (FileAlreadyExistsException e) {
        side = side.resolveSibling(base + "-" + attempt);
      }
    }
    // The side file's name must be durable before the log is truncated, or a crash could lose the
    // bytes.
    LogFile.syncDirectory(side.getParent());
    return side;
  }
}
