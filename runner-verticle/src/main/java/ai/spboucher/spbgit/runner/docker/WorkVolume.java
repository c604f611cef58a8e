package ai.spboucher.spbgit.runner.docker;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A job's {@code /work}: a size-capped tmpfs mounted on the runner host and bind-mounted into the
 * container, so the runner can read how full it got after the container is gone (how a disk breach
 * is told apart from an ordinary failure). Needs root; without it, {@link #mount} reports false and
 * the container gets Docker's own tmpfs instead. Every method blocks.
 */
public final class WorkVolume {

  private static final System.Logger LOG = System.getLogger(WorkVolume.class.getName());

  /** Below this much free space the volume counts as full. */
  private static final long FULL_MARGIN_BYTES = 1 << 20;

  private final Path dir;
  private final long sizeBytes;
  private final int uid;
  private boolean mounted;

  /** {@code uid} owns the volume's root (uid and gid), as the container's user. */
  public WorkVolume(Path dir, long sizeBytes, int uid) {
    this.dir = dir;
    this.sizeBytes = sizeBytes;
    this.uid = uid;
  }

  public Path dir() {
    return dir;
  }

  /** Mounts the tmpfs; false if this host cannot (not root, no mount). */
  public boolean mount() throws IOException {
    Files.createDirectories(dir);
    mounted =
        run(
            "mount",
            "-t",
            "tmpfs",
            "-o",
            "size=" + sizeBytes + ",uid=" + uid + ",gid=" + uid + ",mode=0700,exec,nosuid,nodev",
            "tmpfs",
            dir.toString());
    if (!mounted) {
      LOG.log(
          System.Logger.Level.WARNING,
          "cannot mount a tmpfs for /work (is the runner root?); "
              + "falling back to a Docker tmpfs, so disk_limit is reported as an exit code");
    }
    return mounted;
  }

  public boolean isMounted() {
    return mounted;
  }

  /** Whether the volume is (nearly) full; false when it is not mounted here. */
  public boolean isFull() {
    if (!mounted) {
      return false;
    }
    try {
      long free = Files.getFileStore(dir).getUsableSpace();
      return free < Math.max(FULL_MARGIN_BYTES, sizeBytes / 100);
    } catch (IOException e) {
      return false;
    }
  }

  /** Unmounts (lazily, so a straggling file handle cannot keep it) and removes the directory. */
  public void release() {
    if (mounted) {
      run("umount", "-l", dir.toString());
      mounted = false;
    }
    try {
      Files.deleteIfExists(dir);
    } catch (IOException e) {
      LOG.log(System.Logger.Level.WARNING, "cannot remove " + dir + ": " + e.getMessage());
    }
  }

  /** Unmounts any tmpfs left under {@code root} by a runner that died. */
  public static void releaseLeftovers(Path root) throws IOException {
    if (!Files.isDirectory(root)) {
      return;
    }
    List<String> mounts = Files.readAllLines(Path.of("/proc/self/mounts"), StandardCharsets.UTF_8);
    String prefix = root.toAbsolutePath().normalize() + "/";
    for (String line : mounts) {
      String[] fields = line.split(" ");
      if (fields.length > 1 && fields[1].startsWith(prefix)) {
        run("umount", "-l", fields[1]);
      }
    }
  }

  private static boolean run(String... command) {
    try {
      Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
      String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
      if (!p.waitFor(30, TimeUnit.SECONDS)) {
        p.destroyForcibly();
        return false;
      }
      if (p.exitValue() != 0) {
        LOG.log(System.Logger.Level.DEBUG, String.join(" ", command) + ": " + out);
      }
      return p.exitValue() == 0;
    } catch (IOException e) {
      return false;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }
}
