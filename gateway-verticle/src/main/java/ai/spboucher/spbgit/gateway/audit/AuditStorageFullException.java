package ai.spboucher.spbgit.gateway.audit;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * An audit entry could not be written because the file system holding the audit log is full. The
 * append was rolled back, so the log is as it was before; it works again once space is freed. The
 * API answers 507.
 */
public final class AuditStorageFullException extends IOException {

  private static final long serialVersionUID = 1L;

  AuditStorageFullException(Path file, IOException cause) {
    super(
        "the audit log "
            + file.getFileName()
            + " cannot be written: no space left in the gateway's data "
            + "directory; nothing was recorded or changed (free space, then retry)",
        cause);
  }

  /**
   * Whether a failed write of {@code needed} bytes to {@code file} was for lack of space. Java has
   * no errno: the JDK passes on the system's message ({@code ENOSPC}, {@code EDQUOT}), and the file
   * store's free space is the check when the message is something else.
   */
  static boolean isOutOfSpace(IOException failure, Path file, long needed) {
    String message = String.valueOf(failure.getMessage());
    if (message.contains("No space left on device") || message.contains("Disk quota exceeded")) {
      return true;
    }
    try {
      return Files.getFileStore(file).getUsableSpace() < needed;
    } catch (IOException e) {
      return false;
    }
  }
}
