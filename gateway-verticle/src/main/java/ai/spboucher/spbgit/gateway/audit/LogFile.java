package ai.spboucher.spbgit.gateway.audit;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;

/**
 * The file-system steps under the audit log: its exclusive lock, reading it whole, and making a
 * directory entry durable. Blocking, like the log.
 */
final class LogFile {

  private static final System.Logger LOG = System.getLogger(AuditLog.class.getName());

  private LogFile() {}

  /** The log's exclusive lock, so that a second gateway on the same data directory fails. */
  static FileLock lockExclusively(FileChannel channel, Path file) throws IOException {
    FileLock lock;
    try {
      lock = channel.tryLock();
    } catch (OverlappingFileLockException e) {
      throw new IOException("audit log " + file + " is already open in this process", e);
    }
    if (lock == null) {
      throw new IOException("audit log " + file + " is open in another process");
    }
    return lock;
  }

  static void syncDirectory(Path dir) {
    try (FileChannel directory = FileChannel.open(dir, StandardOpenOption.READ)) {
      directory.force(true);
    } catch (IOException e) {
      // Some platforms cannot open or fsync a directory; the file fsyncs are then all we can do.
      LOG.log(System.Logger.Level.DEBUG, "cannot fsync directory " + dir + ": " + e);
    }
  }

  static byte[] readAll(FileChannel channel) throws IOException {
    long length = channel.size();
    if (length > Integer.MAX_VALUE - 8) {
      throw new IOException("audit log is too large to load (" + length + " bytes)");
    }
    ByteBuffer buffer = ByteBuffer.allocate((int) length);
    long position = 0;
    while (buffer.hasRemaining()) {
      int read = channel.read(buffer, position);
      if (read < 0) {
        break;
      }
      position += read;
    }
    return Arrays.copyOf(buffer.array(), buffer.position());
  }
}
