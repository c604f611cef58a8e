package ai.spboucher.spbgit.runner.model;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Optional;

/**
 * The runner's warning to an llm job's agent that the job is ending: the file {@code
 * /work/.spb/breach}, holding {@code timeout} or {@code budget_exceeded}, after which the agent has
 * a grace period to push its partial work.
 *
 * <p>The directory lives on the runner host outside the job's work volume and is bind-mounted
 * read-only at {@code /work/.spb}: the runner, as root, never writes anywhere the container can
 * change, so the agent cannot redirect the write with a symbolic link or stall it with a FIFO. The
 * file is written once (the first breach wins), atomically, owned by the sandbox uid when the
 * runner is root, mode 0644.
 *
 * <p>Threading: thread-safe.
 */
public final class BreachNotice {

  public static final String FILE = "breach";
  private static final System.Logger LOG = System.getLogger(BreachNotice.class.getName());

  private final Path dir;
  private final int agentUid;
  private String reason;

  private BreachNotice(Path dir, int agentUid) {
    this.dir = dir;
    this.agentUid = agentUid;
  }

  /**
   * Creates the (empty) host directory, mode 0755; the notice will belong to {@code agentUid} (uid
   * and gid).
   */
  public static BreachNotice create(Path dir, int agentUid) throws IOException {
    Files.createDirectories(dir);
    Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxr-xr-x"));
    return new BreachNotice(dir, agentUid);
  }

  /** The host directory to mount at {@code /work/.spb} ({@code SandboxSpec.NOTICE_MOUNT}). */
  public Path dir() {
    return dir;
  }

  /** Writes {@code reason} unless a breach was already written; true if this call wrote it. */
  public synchronized boolean write(String reason) throws IOException {
    if (this.reason != null) {
      return false;
    }
    Path tmp = dir.resolve(FILE + ".tmp");
    Files.writeString(tmp, reason + "\n", StandardCharsets.UTF_8);
    Files.setPosixFilePermissions(tmp, PosixFilePermissions.fromString("rw-r--r--"));
    giveToAgent(tmp);
    Files.move(
        tmp,
        dir.resolve(FILE),
        StandardCopyOption.ATOMIC_MOVE,
        StandardCopyOption.REPLACE_EXISTING);
    this.reason = reason;
    return true;
  }

  /** The breach written, if any. */
  public synchronized Optional<String> reason() {
    return Optional.ofNullable(reason);
  }

  /** Removes the file and the directory. */
  public void delete() {
    try {
      Files.deleteIfExists(dir.resolve(FILE + ".tmp"));
      Files.deleteIfExists(dir.resolve(FILE));
      Files.deleteIfExists(dir);
    } catch (IOException e) {
      LOG.log(System.Logger.Level.WARNING, "cannot remove " + dir + ": " + e.getMessage());
    }
  }

  private void giveToAgent(Path file) {
    try {
      // By number: the sandbox uid is deliberately no account of this host.
      Files.setAttribute(file, "unix:uid", agentUid, LinkOption.NOFOLLOW_LINKS);
      Files.setAttribute(file, "unix:gid", agentUid, LinkOption.NOFOLLOW_LINKS);
    } catch (IOException | UnsupportedOperationException e) {
      // Not root: the file stays the runner's, still readable by the agent.
      LOG.log(System.Logger.Level.DEBUG, "cannot give " + file + " to uid " + agentUid + ": " + e);
    }
  }
}
