package ai.spboucher.spbgit.runner;

import java.io.BufferedOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.FileTime;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * What setup phases leave for the next jobs of a repository: the environment's {@code cache} paths
 * of a job's {@code /work}, as one tar per repository and key under {@code
 * <SPB_RUNNER_WORK_DIR>/cache/<repo>/<key>.tar}. The key ({@link #key}) covers the repository, the
 * image digest, the setup script and the contents of the cache key files, so one repository's cache
 * never reaches another's and a changed lockfile or image misses. Each tar starts with who produced
 * it ({@link CacheProducer}), handed back on a hit. Bounded by {@code SPB_CACHE_ENTRY_SIZE} per
 * tar, counted before anything is written ({@link CacheArchive}), and by {@code SPB_CACHE_SIZE} in
 * all: the least recently used tars go first.
 *
 * <p>Restoring never follows a link ({@link CacheRestore}).
 *
 * <p>Threading: every method blocks (file I/O) and may be called from any job thread; the tars of
 * one directory are changed under this object's lock.
 */
final class JobCache {

  private static final System.Logger LOG = System.getLogger(JobCache.class.getName());
  private static final LinkOption[] NO_FOLLOW = {LinkOption.NOFOLLOW_LINKS};

  private final Path root;
  private final long limitBytes;
  private final long entryLimitBytes;

  /** Bytes of tars being written, counted against {@link #limitBytes} with those kept. */
  private long reservedBytes;

  /** A cache of {@code limitBytes} in all whose tars may each take half of it. */
  JobCache(Path root, long limitBytes) {
    this(root, limitBytes, limitBytes / 2);
  }

  /**
   * @param limitBytes {@code SPB_CACHE_SIZE}: all tars together; 0 keeps none
   * @param entryLimitBytes {@code SPB_CACHE_ENTRY_SIZE}: one tar, at most {@code limitBytes}
   */
  JobCache(Path root, long limitBytes, long entryLimitBytes) {
    if (entryLimitBytes < 0 || entryLimitBytes > limitBytes) {
      throw new IllegalArgumentException("the entry limit must be between 0 and the cache limit");
    }
    this.root = root;
    this.limitBytes = limitBytes;
    this.entryLimitBytes = entryLimitBytes;
  }

  boolean enabled() {
    return limitBytes > 0;
  }

  /** The biggest cache key file read; a bigger one counts as missing. */
  static final long KEY_FILE_LIMIT = 16 << 20;

  /**
   * The cache key: SHA-256 over the repository, the image digest, the setup script, the cache paths
   * and the {@link #keyFilesDigest} of the key files, each length-prefixed so no two inputs run
   * together.
   */
  static String key(
      String repo,
      String imageDigest,
      String setup,
      List<String> cachePaths,
      Map<String, byte[]> keyFiles) {
    return key(repo, imageDigest, setup, cachePaths, keyFilesDigest(keyFiles));
  }

  /** The cache key of {@link #key(String, String, String, List, Map)} from the files' digest. */
  static String key(
      String repo,
      String imageDigest,
      String setup,
      List<String> cachePaths,
      String keyFilesDigest) {
    MessageDigest sha = sha256();
    update(sha, repo.getBytes(StandardCharsets.UTF_8));
    update(sha, imageDigest.getBytes(StandardCharsets.UTF_8));
    update(sha, setup.getBytes(StandardCharsets.UTF_8));
    for (String path : cachePaths) {
      update(sha, path.getBytes(StandardCharsets.UTF_8));
    }
    update(sha, keyFilesDigest.getBytes(StandardCharsets.UTF_8));
    return HexFormat.of().formatHex(sha.digest());
  }

  /**
   * SHA-256 (hex) over each key file's path and contents (a single -1 byte for a missing one), in
   * path order, each length-prefixed. The gateway computes the same from the job's base commit
   * ({@code CacheKeyFiles} in its environment package) and sends it as {@code
   * cache_key_files_digest}: keep the two the same.
   *
   * @param keyFiles by path, sorted (a {@code TreeMap}); null contents for a missing file
   */
  static String keyFilesDigest(Map<String, byte[]> keyFiles) {
    MessageDigest sha = sha256();
    for (Map.Entry<String, byte[]> file : keyFiles.entrySet()) {
      update(sha, file.getKey().getBytes(StandardCharsets.UTF_8));
      update(sha, file.getValue() == null ? new byte[] {-1} : file.getValue());
    }
    return HexFormat.of().formatHex(sha.digest());
  }

  /**
   * The cache key files as the clone in {@code repoDir} has them (null for a missing one or one
   * larger than {@link #KEY_FILE_LIMIT}), never through a link out of it. Blocking.
   */
  static Map<String, byte[]> readKeyFiles(Path repoDir, List<String> names) throws IOException {
    Path repo = repoDir.toRealPath();
    Map<String, byte[]> files = new TreeMap<>();
    for (String name : names) {
      Path file = repo.resolve(name).normalize();
      byte[] contents = null;
      if (file.startsWith(repo) && Files.isRegularFile(file)) {
        Path real = file.toRealPath();
        if (real.startsWith(repo) && Files.size(real) <= KEY_FILE_LIMIT) {
          contents = Files.readAllBytes(real);
        }
      }
      files.put(name, contents);
    }
    return files;
  }

  private static MessageDigest sha256() {
    try {
      return MessageDigest.getInstance("SHA-256");
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  private static void update(MessageDigest sha, byte[] bytes) {
    sha.update(ByteBuffer.allocate(8).putLong(bytes.length).array());
    sha.update(bytes);
  }

  /**
   * The repository's directory: its name made a single path component, plus a hash so two never
   * share one.
   */
  private Path repoDir(String repo) {
    String safe = repo.replaceAll("[^A-Za-z0-9._-]", "_");
    String hash = key(repo, "", "", List.of(), Map.of()).substring(0, 12);
    return root.resolve(safe + "-" + hash);
  }

  private Path tar(String repo, String key) {
    return repoDir(repo).resolve(key + ".tar");
  }

  /** Whether a cache is kept for the repository and key. */
  synchronized boolean has(String repo, String key) {
    return enabled() && Files.isRegularFile(tar(repo, key), NO_FOLLOW);
  }

  /**
   * Restores the repository's cache for {@code key} into {@code workDir} (the job's {@code /work}
   * on the host), owned by {@code uid}, and returns who produced it ({@link CacheProducer#UNKNOWN}
   * for a tar kept without a record); empty when none is kept. Marks the tar used (LRU).
   *
   * @param cachePaths absolute paths under {@code /work}; entries elsewhere are refused
   * @throws IOException also when an entry leaves the cache paths or meets a link on its way
   */
  Optional<CacheProducer> restore(
      String repo, String key, List<String> cachePaths, Path workDir, int uid) throws IOException {
    CacheEntry entry = open(repo, key);
    if (entry == null) {
      return Optional.empty();
    }
    CacheRestore.extract(entry.tar(), cachePaths, workDir, uid);
    return Optional.of(entry.producer());
  }

  /**
   * The repository's tar for {@code key} and who produced it, opened and marked used (LRU) under
   * the lock, so an eviction after this no longer takes it away (the open file outlives its name);
   * null when none is kept. {@link CacheRestore#extract} reads and closes the tar.
   */
  synchronized CacheEntry open(String repo, String key) throws IOException {
    Path tar = tar(repo, key);
    if (!enabled() || !Files.isRegularFile(tar, NO_FOLLOW)) {
      return null;
    }
    Files.setLastModifiedTime(tar, FileTime.fromMillis(System.currentTimeMillis()));
    CacheProducer producer = CacheArchive.producer(tar);
    return new CacheEntry(Files.newInputStream(tar, NO_FOLLOW), producer);
  }

  /**
   * Keeps the cache paths of {@code workDir} for {@code key}, recording {@code producer}, if the
   * tar fits {@code SPB_CACHE_ENTRY_SIZE}: counted first ({@link CacheArchive#count}), written only
   * when it fits, and never written past what was counted. Room is made before writing: the least
   * recently used tars go until all, with this one and those other jobs are writing, fit in {@code
   * SPB_CACHE_SIZE}. Links are stored as links, never followed; hard links as hard links.
   */
  CacheKept keep(
      String repo, String key, List<String> cachePaths, Path workDir, CacheProducer producer)
      throws IOException {
    if (!enabled()) {
      return CacheKept.notKept("the cache is off (SPB_CACHE_SIZE=0)");
    }
    CacheArchive archive = new CacheArchive(workDir, cachePaths, producer);
    CacheArchive.Count count;
    try {
      count = archive.count(entryLimitBytes);
    } catch (CacheArchive.NotKept e) {
      return logged(repo, key, CacheKept.notKept(e.getMessage()));
    }
    if (count.bytes() > entryLimitBytes) {
      return logged(
          repo, key, CacheKept.overLimit(count.bytes(), entryLimitBytes, count.complete()));
    }
    reserve(count.bytes());
    boolean reserved = true;
    Path tmp = null;
    try {
      Path dir = repoDir(repo);
      Files.createDirectories(dir);
      tmp = Files.createTempFile(dir, key, ".tmp");
      long size;
      try {
        size =
            archive.write(
                new BufferedOutputStream(Files.newOutputStream(tmp), 1 << 16), count.bytes());
      } catch (CacheArchive.NotKept e) {
        return logged(repo, key, CacheKept.notKept(e.getMessage()));
      }
      synchronized (this) {
        Files.move(
            tmp,
            tar(repo, key),
            StandardCopyOption.REPLACE_EXISTING,
            StandardCopyOption.ATOMIC_MOVE);
        // From here one of the tars evict() counts.
        reservedBytes -= count.bytes();
        reserved = false;
      }
      return CacheKept.kept(size);
    } finally {
      if (tmp != null) {
        Files.deleteIfExists(tmp);
      }
      if (reserved) {
        release(count.bytes());
      }
    }
  }

  private static CacheKept logged(String repo, String key, CacheKept notKept) {
    LOG.log(System.Logger.Level.INFO, "cache " + key + " of " + repo + ": " + notKept.why());
    return notKept;
  }

  /**
   * Makes room for a tar of {@code bytes} about to be written, beside those kept and those other
   * jobs are writing, and counts it as being written.
   */
  private synchronized void reserve(long bytes) throws IOException {
    evict(reservedBytes + bytes);
    reservedBytes += bytes;
  }

  private synchronized void release(long bytes) {
    reservedBytes -= bytes;
  }

  /**
   * Deletes the least recently used tars, of any repository, until the rest and {@code room} more
   * fit. Under the lock.
   */
  private void evict(long room) throws IOException {
    if (!Files.isDirectory(root)) {
      return;
    }
    List<Path> tars = new ArrayList<>();
    try (DirectoryStream<Path> repos = Files.newDirectoryStream(root)) {
      for (Path repo : repos) {
        try (DirectoryStream<Path> kept = Files.newDirectoryStream(repo, "*.tar")) {
          kept.forEach(tars::add);
        }
      }
    }
    tars.sort((a, b) -> lastUse(b).compareTo(lastUse(a)));
    long total = room;
    for (Path tar : tars) {
      total += Files.size(tar);
      if (total > limitBytes) {
        LOG.log(
            System.Logger.Level.INFO,
            "evicting cache " + root.relativize(tar) + " (least recently used)");
        Files.deleteIfExists(tar);
      }
    }
  }

  private static FileTime lastUse(Path tar) {
    try {
      return Files.getLastModifiedTime(tar);
    } catch (IOException e) {
      return FileTime.fromMillis(0);
    }
  }
}
