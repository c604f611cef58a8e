package ai.spboucher.spbgit.runner;

import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermission;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.commons.compress.archivers.tar.TarArchiveEntry;
import org.apache.commons.compress.archivers.tar.TarArchiveInputStream;
import org.apache.commons.compress.archivers.tar.TarConstants;

/**
 * Restores a kept setup cache into a job's {@code /work} on the host, never through a link: every
 * entry must lie under one of the cache paths, every directory on its way must be a real directory,
 * and an existing link in the way is refused; a hard link may only name a file this restore
 * extracted before it. The work volume holds the clone of a repository nobody vetted, which may
 * carry a link out of it; the runner writes as root on the host.
 *
 * <p>Threading: blocking (file I/O); any job thread, one restore per volume at a time.
 */
final class CacheRestore {

  private static final LinkOption[] NO_FOLLOW = {LinkOption.NOFOLLOW_LINKS};
  private static final int COPY_BUFFER = 1 << 20;

  private CacheRestore() {}

  /**
   * Extracts a tar {@link JobCache#open} gave into {@code workDir}, owned by {@code uid}, and
   * closes it. Nothing else may write the volume meanwhile: no container of the job runs (the
   * clone's is gone or, on a hit keyed by the gateway, never ran; the agent's is at most created).
   *
   * @param cachePaths absolute paths under {@code /work}; entries elsewhere are refused
   * @throws IOException also when an entry leaves the cache paths or meets a link on its way
   */
  static void extract(InputStream tar, List<String> cachePaths, Path workDir, int uid)
      throws IOException {
    // Directories this restore made or found real. As nothing else writes the volume and a
    // directory is never replaced here, one checked stays one: a path is checked once, not once per
    // entry under it.
    Set<Path> realDirectories = new HashSet<>();
    // A dependency cache is mostly a few big files (shared libraries, wheels): copied in 1 MiB
    // steps,
    // not InputStream.transferTo's 8 KiB.
    byte[] buffer = new byte[COPY_BUFFER];
    // Regular files this restore wrote, by entry name: the only files a hard link may name.
    Map<String, Path> written = new HashMap<>();
    boolean first = true;
    try (InputStream in = new BufferedInputStream(tar, 1 << 16);
        TarArchiveInputStream entries = new TarArchiveInputStream(in)) {
      for (TarArchiveEntry entry = entries.getNextEntry();
          entry != null;
          entry = entries.getNextEntry()) {
        if (first && CacheArchive.isProducerRecord(entry)) {
          first = false;
          continue;
        }
        first = false;
        String name = nameUnderCachePaths(entry, cachePaths);
        Path target = workDir.resolve(name.substring("/work/".length()));
        Path parent = realDirectories(workDir, target.getParent(), uid, realDirectories);
        Path path = parent.resolve(target.getFileName());
        written.remove(name);
        if (entry.isDirectory()) {
          realDirectories(workDir, path, uid, realDirectories);
        } else if (entry.isSymbolicLink()) {
          replaceable(path);
          Files.createSymbolicLink(path, Path.of(entry.getLinkName()));
        } else if (entry.getLinkFlag() == TarConstants.LF_NORMAL
            || entry.getLinkFlag() == TarConstants.LF_OLDNORM) {
          replaceable(path);
          copy(entries, path, buffer);
          Files.setPosixFilePermissions(path, permissions(entry.getMode()));
          written.put(name, path);
        } else if (entry.isLink()) {
          Path existing = hardLinkTarget(entry, name, cachePaths, written);
          replaceable(path);
          Files.createLink(path, existing);
          written.put(name, path);
        } else {
          continue; // Devices and fifos are never kept.
        }
        Files.setAttribute(path, "unix:uid", uid, NO_FOLLOW);
        Files.setAttribute(path, "unix:gid", uid, NO_FOLLOW);
      }
    }
  }

  /** The entry's absolute name, without a trailing slash; refused outside the cache paths. */
  private static String nameUnderCachePaths(TarArchiveEntry entry, List<String> cachePaths)
      throws IOException {
    String name = "/" + entry.getName().replaceAll("/+$", "");
    if (!underCachePaths(name, cachePaths)) {
      throw new IOException(
          "cache entry " + entry.getName() + " is outside the cache paths " + cachePaths);
    }
    return name;
  }

  /** Writes the entry's content to {@code path}, which must not exist (a link is not followed). */
  private static void copy(InputStream entry, Path path, byte[] buffer) throws IOException {
    try (OutputStream out =
        Files.newOutputStream(
            path,
            StandardOpenOption.CREATE_NEW,
            StandardOpenOption.WRITE,
            LinkOption.NOFOLLOW_LINKS)) {
      for (int n = entry.read(buffer); n > 0; n = entry.read(buffer)) {
        out.write(buffer, 0, n);
      }
    }
  }

  /**
   * The file a hard-link entry names: one this restore wrote from an earlier entry under the cache
   * paths, and still a regular file; never one that was there before (the clone's, say) or one
   * outside.
   */
  private static Path hardLinkTarget(
      TarArchiveEntry entry, String name, List<String> cachePaths, Map<String, Path> written)
      throws IOException {
    String target = "/" + entry.getLinkName();
    Path existing = written.get(target);
    if (!underCachePaths(target, cachePaths)
        || target.equals(name)
        || existing == null
        || !Files.isRegularFile(existing, NO_FOLLOW)) {
      throw new IOException(
          "cache restore refused: the hard link "
              + entry.getName()
              + " names "
              + entry.getLinkName()
              + ", not a file extracted before it under the cache paths "
              + cachePaths);
    }
    return existing;
  }

  /** Whether {@code name} (normalised, absolute) is one of the cache paths or under one. */
  static boolean underCachePaths(String name, List<String> cachePaths) {
    if (name.contains("/../")
        || name.endsWith("/..")
        || name.contains("/./")
        || name.contains("//")
        || !name.startsWith("/work/")) {
      return false;
    }
    for (String path : cachePaths) {
      String p = path.replaceAll("/+$", "");
      if (name.equals(p) || name.startsWith(p + "/")) {
        return true;
      }
    }
    return false;
  }

  /**
   * Makes every directory from {@code workDir} to {@code dir}, refusing a link or a file on the
   * way; skips those in {@code checked}, and adds those it checks.
   */
  private static Path realDirectories(Path workDir, Path dir, int uid, Set<Path> checked)
      throws IOException {
    if (checked.contains(dir)) {
      return dir;
    }
    Path at = workDir;
    for (Path part : workDir.relativize(dir)) {
      at = at.resolve(part);
      if (!checked.add(at)) {
        continue;
      }
      if (Files.isSymbolicLink(at)) {
        throw new IOException("cache restore refused: " + at + " is a link");
      }
      if (!Files.exists(at, NO_FOLLOW)) {
        Files.createDirectory(at);
        Files.setAttribute(at, "unix:uid", uid, NO_FOLLOW);
        Files.setAttribute(at, "unix:gid", uid, NO_FOLLOW);
      } else if (!Files.isDirectory(at, NO_FOLLOW)) {
        throw new IOException("cache restore refused: " + at + " is not a directory");
      }
    }
    return at;
  }

  /** Removes a file or link the entry replaces; a directory in its place is an error. */
  private static void replaceable(Path path) throws IOException {
    if (Files.isDirectory(path, NO_FOLLOW)) {
      throw new FileAlreadyExistsException(path.toString(), null, "a directory is in the way");
    }
    Files.deleteIfExists(path);
  }

  private static Set<PosixFilePermission> permissions(int mode) {
    Set<PosixFilePermission> set = EnumSet.noneOf(PosixFilePermission.class);
    for (PosixFilePermission p : PosixFilePermission.values()) {
      if ((mode & (1 << (8 - p.ordinal()))) != 0) {
        set.add(p);
      }
    }
    return set;
  }
}
