package ai.spboucher.spbgit.runner;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.spboucher.spbgit.gateway.environment.CacheKeyFiles;
import ai.spboucher.spbgit.testsupport.GitCli;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardWatchEventKinds;
import java.nio.file.WatchService;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.commons.compress.archivers.tar.TarArchiveEntry;
import org.apache.commons.compress.archivers.tar.TarArchiveOutputStream;
import org.apache.commons.compress.archivers.tar.TarConstants;
import org.eclipse.jgit.lib.Repository;
import org.eclipse.jgit.storage.file.FileRepositoryBuilder;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class JobCacheTest {

  private static final int UID = (int) currentUid();
  private static final List<String> PATHS = List.of("/work/venv");
  private static final CacheProducer PRODUCER = new CacheProducer("job-1", "0123abcd");

  /** The producer record's header and its few bytes of JSON, one record. */
  private static final long PRODUCER_RECORD = 512 + 512;

  /** The two zero records that end a tar. */
  private static final long END = 1024;

  @TempDir Path tmp;

  @Test
  void keyChangesWithRepositoryImageScriptAndKeyFileContents() {
    Map<String, byte[]> lock = Map.of("requirements.txt", bytes("a==1\n"));
    String key = JobCache.key("demo", "sha256:1", "pip install", PATHS, lock);
    assertEquals(
        key,
        JobCache.key(
            "demo", "sha256:1", "pip install", PATHS, Map.of("requirements.txt", bytes("a==1\n"))));
    assertNotEquals(key, JobCache.key("other", "sha256:1", "pip install", PATHS, lock));
    assertNotEquals(key, JobCache.key("demo", "sha256:2", "pip install", PATHS, lock));
    assertNotEquals(key, JobCache.key("demo", "sha256:1", "pip install -U", PATHS, lock));
    assertNotEquals(
        key,
        JobCache.key(
            "demo", "sha256:1", "pip install", PATHS, Map.of("requirements.txt", bytes("a==2\n"))));
    java.util.HashMap<String, byte[]> missing = new java.util.HashMap<>();
    missing.put("requirements.txt", null);
    assertNotEquals(key, JobCache.key("demo", "sha256:1", "pip install", PATHS, missing));
  }

  /**
   * The gateway's digest of the key files at a commit ({@code CacheKeyFiles}, sent as {@code
   * cache_key_files_digest}) is the one the runner computes from a git CLI clone of it, so a hit
   * keyed before the clone finds the cache a miss keyed after it kept.
   */
  @Test
  void theGatewaysKeyFilesDigestIsTheOneTheRunnerReadsFromTheClone() throws Exception {
    GitCli git = new GitCli(Files.createDirectories(tmp.resolve("home")));
    Path origin = git.workTree(tmp, "origin");
    Files.writeString(origin.resolve("requirements.txt"), "flask==3.0\n");
    Files.createDirectories(origin.resolve("web"));
    Files.write(origin.resolve("web/package-lock.json"), new byte[] {0, 1, 2, (byte) 0xff});
    Files.writeString(origin.resolve("run.sh"), "#!/bin/sh\n");
    Files.setPosixFilePermissions(
        origin.resolve("run.sh"),
        java.nio.file.attribute.PosixFilePermissions.fromString("rwxr-xr-x"));
    git.ok(origin, "add", "-A");
    git.ok(origin, "commit", "-q", "-m", "key files");
    Path clone = tmp.resolve("clone");
    git.ok(tmp, "clone", "-q", origin.toString(), clone.toString());
    List<String> names =
        List.of(
            "web/package-lock.json", "requirements.txt", "run.sh", "absent.lock", "README.md/x");

    String runner = JobCache.keyFilesDigest(JobCache.readKeyFiles(clone, names));
    try (Repository repository =
        new FileRepositoryBuilder().setGitDir(origin.resolve(".git").toFile()).build()) {
      assertEquals(
          Optional.of(runner), CacheKeyFiles.digest(repository, repository.resolve("HEAD"), names));
    }
    Files.writeString(clone.resolve("requirements.txt"), "flask==3.1\n");
    assertNotEquals(runner, JobCache.keyFilesDigest(JobCache.readKeyFiles(clone, names)));
  }

  @Test
  void keepsAndRestoresFilesDirectoriesAndLinksForTheSameRepositoryOnly() throws Exception {
    Path work = Files.createDirectories(tmp.resolve("work"));
    Files.createDirectories(work.resolve("venv/bin"));
    Files.writeString(work.resolve("venv/bin/tool"), "#!/bin/sh\n");
    Files.setPosixFilePermissions(
        work.resolve("venv/bin/tool"),
        java.nio.file.attribute.PosixFilePermissions.fromString("rwxr-x---"));
    Files.createSymbolicLink(work.resolve("venv/bin/python"), Path.of("/usr/bin/python3"));
    Files.writeString(work.resolve("outside.txt"), "not cached");
    JobCache cache = new JobCache(tmp.resolve("cache"), 1 << 20);
    assertTrue(cache.keep("demo", "k1", PATHS, work, PRODUCER).kept());

    Path fresh = Files.createDirectories(tmp.resolve("fresh"));
    assertTrue(
        cache.restore("other", "k1", PATHS, fresh, UID).isEmpty(),
        "another repository's key never hits");
    assertEquals(Optional.of(PRODUCER), cache.restore("demo", "k1", PATHS, fresh, UID));
    assertEquals("#!/bin/sh\n", Files.readString(fresh.resolve("venv/bin/tool")));
    assertEquals(
        "rwxr-x---",
        java.nio.file.attribute.PosixFilePermissions.toString(
            Files.getPosixFilePermissions(fresh.resolve("venv/bin/tool"))));
    assertEquals(
        Path.of("/usr/bin/python3"), Files.readSymbolicLink(fresh.resolve("venv/bin/python")));
    assertFalse(Files.exists(fresh.resolve("outside.txt")));
  }

  @Test
  void refusesEntriesOutsideTheCachePaths() throws Exception {
    JobCache cache = new JobCache(tmp.resolve("cache"), 1 << 20);
    for (String name :
        List.of(
            "work/venv/../../etc/passwd",
            "work/home/.bashrc",
            "etc/passwd",
            "work/venv/./x/../../../y")) {
      plant(cache, "demo", "bad", name);
      Path fresh = Files.createDirectories(tmp.resolve("fresh-" + Math.abs(name.hashCode())));
      assertThrows(IOException.class, () -> cache.restore("demo", "bad", PATHS, fresh, UID), name);
    }
    assertFalse(Files.exists(tmp.resolve("etc")));
  }

  @Test
  void refusesToWriteThroughALinkTheCloneCarries() throws Exception {
    Path work = Files.createDirectories(tmp.resolve("work"));
    Files.createDirectories(work.resolve("venv/lib"));
    Files.writeString(work.resolve("venv/lib/x"), "payload");
    JobCache cache = new JobCache(tmp.resolve("cache"), 1 << 20);
    cache.keep("demo", "k", PATHS, work, PRODUCER);

    // The next job's clone holds venv as a link out of the work volume (a repository can commit
    // one).
    Path victim = Files.createDirectories(tmp.resolve("victim"));
    Path fresh = Files.createDirectories(tmp.resolve("fresh"));
    Files.createSymbolicLink(fresh.resolve("venv"), victim);
    assertThrows(IOException.class, () -> cache.restore("demo", "k", PATHS, fresh, UID));
    assertFalse(Files.exists(victim.resolve("lib")), "nothing was written through the link");
  }

  @Test
  void evictsTheLeastRecentlyUsedCacheBeyondTheLimit() throws Exception {
    Path work = Files.createDirectories(tmp.resolve("work"));
    Files.createDirectories(work.resolve("venv"));
    Files.write(work.resolve("venv/blob"), new byte[40_000]);
    JobCache cache = new JobCache(tmp.resolve("cache"), 100_000);
    cache.keep("a", "k1", PATHS, work, PRODUCER);
    Files.setLastModifiedTime(
        tmp.resolve("cache").resolve(only(tmp.resolve("cache"))).resolve("k1.tar"),
        java.nio.file.attribute.FileTime.fromMillis(1000));
    cache.keep("b", "k2", PATHS, work, PRODUCER);
    cache.keep("c", "k3", PATHS, work, PRODUCER);
    assertFalse(cache.has("a", "k1"), "the oldest went");
    assertTrue(cache.has("b", "k2"));
    assertTrue(cache.has("c", "k3"));
    assertTrue(directorySize(tmp.resolve("cache")) <= 100_000);
    assertFalse(
        new JobCache(tmp.resolve("small"), 1000).keep("a", "k", PATHS, work, PRODUCER).kept(),
        "too large alone");
  }

  /**
   * Fifty names of one file: its data once in the tar (today's copy of each name would be 51 times
   * it, over the bound), restored as one inode with 51 names.
   */
  @Test
  void hardLinkedFilesAreStoredOnceAndRestoredAsLinks() throws Exception {
    Path work = Files.createDirectories(tmp.resolve("work"));
    Path lib = Files.createDirectories(work.resolve("venv/lib"));
    byte[] data = new byte[100_000];
    new java.util.Random(7).nextBytes(data);
    Files.write(lib.resolve("data"), data);
    for (int i = 0; i < 50; i++) {
      Files.createLink(lib.resolve("link" + i), lib.resolve("data"));
    }
    JobCache cache = new JobCache(tmp.resolve("cache"), 1 << 20);
    CacheKept kept = cache.keep("demo", "k", PATHS, work, PRODUCER);
    assertTrue(kept.kept(), kept.describe());
    assertEquals(Files.size(tarOf("demo", "k")), kept.bytes());
    assertTrue(kept.bytes() < data.length + 60 * 512 + 2048, kept.describe());

    Path fresh = Files.createDirectories(tmp.resolve("fresh"));
    assertTrue(cache.restore("demo", "k", PATHS, fresh, UID).isPresent());
    Path restored = fresh.resolve("venv/lib/data");
    assertEquals(51, Files.getAttribute(restored, "unix:nlink"));
    Object inode = Files.readAttributes(restored, BasicFileAttributes.class).fileKey();
    for (int i = 0; i < 50; i++) {
      Path link = fresh.resolve("venv/lib/link" + i);
      assertEquals(inode, Files.readAttributes(link, BasicFileAttributes.class).fileKey(), "" + i);
    }
    assertArrayEquals(data, Files.readAllBytes(fresh.resolve("venv/lib/link49")));
    assertEquals(UID, Files.getAttribute(fresh.resolve("venv/lib/link7"), "unix:uid"));
  }

  /** A sparse file takes no room in /work but all of its apparent size in the tar: so it counts. */
  @Test
  void aSparseFileCountsByItsApparentSize() throws Exception {
    Path work = Files.createDirectories(tmp.resolve("work"));
    Files.createDirectories(work.resolve("venv"));
    sparse(work.resolve("venv/sparse"), 8 << 20);

    CacheKept kept =
        new JobCache(tmp.resolve("cache"), 32 << 20).keep("demo", "k", PATHS, work, PRODUCER);
    assertTrue(kept.kept(), kept.describe());
    assertEquals(Files.size(tarOf("demo", "k")), kept.bytes());
    long expected = PRODUCER_RECORD + 512 + 512 + (8 << 20) + END;
    assertEquals(expected, kept.bytes());

    CacheKept over =
        new JobCache(tmp.resolve("small"), 8 << 20).keep("demo", "k", PATHS, work, PRODUCER);
    assertFalse(over.kept());
    assertEquals(expected, over.bytes());
    assertEquals(expected - (4 << 20), over.overLimit());
    assertTrue(
        over.describe()
            .startsWith("not cached: " + (expected - (4 << 20)) + " bytes over the limit"),
        over.describe());
  }

  /**
   * The attack of the issue, scaled to a test: a 1 GiB sparse file and fifty hard links to a 1 MiB
   * file, with a 64 MiB cache; and a 40 MiB sparse file, over the 32 MiB an entry may take but
   * within the cache. Neither is written: no file, not even the repository's directory, is ever
   * created under the cache.
   */
  @Test
  void aCacheOverTheEntryBoundOrTheWholeCacheIsNeverWritten() throws Exception {
    Path work = Files.createDirectories(tmp.resolve("work"));
    Path venv = Files.createDirectories(work.resolve("venv"));
    sparse(venv.resolve("sparse"), 1L << 30);
    Files.write(venv.resolve("data"), new byte[1 << 20]);
    for (int i = 0; i < 50; i++) {
      Files.createLink(venv.resolve("link" + i), venv.resolve("data"));
    }
    Path other = Files.createDirectories(tmp.resolve("other"));
    Files.createDirectories(other.resolve("venv"));
    sparse(other.resolve("venv/sparse"), 40 << 20);
    Path root = Files.createDirectories(tmp.resolve("cache"));
    JobCache cache = new JobCache(root, 64 << 20);

    try (WatchService watch = root.getFileSystem().newWatchService()) {
      root.register(
          watch, StandardWatchEventKinds.ENTRY_CREATE, StandardWatchEventKinds.ENTRY_MODIFY);
      long started = System.nanoTime();
      CacheKept attack = cache.keep("demo", "k", PATHS, work, PRODUCER);
      CacheKept big = cache.keep("demo", "k2", PATHS, other, PRODUCER);
      assertTrue(
          java.time.Duration.ofNanos(System.nanoTime() - started).toSeconds() < 5,
          "nothing was read, only counted");

      long attackBytes =
          PRODUCER_RECORD + 512 + (512 + (1L << 30)) + (512 + (1 << 20)) + 50 * 512 + END;
      assertFalse(attack.kept());
      assertEquals(attackBytes, attack.bytes());
      assertEquals(attackBytes - (32 << 20), attack.overLimit());
      assertTrue(
          attack
              .describe()
              .startsWith("not cached: " + (attackBytes - (32 << 20)) + " bytes over the limit"),
          attack.describe());
      long bigBytes = PRODUCER_RECORD + 512 + 512 + (40 << 20) + END;
      assertFalse(big.kept());
      assertEquals(bigBytes - (32 << 20), big.overLimit());

      assertEquals(null, watch.poll(1, java.util.concurrent.TimeUnit.SECONDS), "nothing created");
    }
    try (var list = Files.list(root)) {
      assertEquals(List.of(), list.toList());
    }
    assertFalse(cache.has("demo", "k"));
  }

  /**
   * The count is the tar's exact size, long names (PAX headers) and link targets included, and the
   * tar is written up to it and no further: a file that grew after the count ends the keep before a
   * byte past the count.
   */
  @Test
  void theCountIsTheTarsSizeAndAFileThatGrowsAfterItIsNotWrittenPastIt() throws Exception {
    Path work = Files.createDirectories(tmp.resolve("work"));
    String deep = "d".repeat(80) + "/" + "e".repeat(80);
    Path dir = Files.createDirectories(work.resolve("venv/" + deep));
    Files.write(dir.resolve("f".repeat(120)), new byte[3000]);
    Files.createLink(dir.resolve("g".repeat(120)), dir.resolve("f".repeat(120)));
    Files.createSymbolicLink(dir.resolve("link"), Path.of("/usr/" + "x".repeat(200)));
    Files.writeString(work.resolve("venv/grows"), "short");
    CacheArchive archive = new CacheArchive(work, PATHS, PRODUCER);

    CacheArchive.Count count = archive.count(1 << 20);
    assertTrue(count.complete());
    java.io.ByteArrayOutputStream tar = new java.io.ByteArrayOutputStream();
    assertEquals(count.bytes(), archive.write(tar, count.bytes()));
    assertEquals(count.bytes(), tar.size());

    Files.write(
        work.resolve("venv/grows"), new byte[10_000], java.nio.file.StandardOpenOption.APPEND);
    java.io.ByteArrayOutputStream cut = new java.io.ByteArrayOutputStream();
    CacheArchive.NotKept changed =
        assertThrows(CacheArchive.NotKept.class, () -> archive.write(cut, count.bytes()));
    assertTrue(changed.getMessage().contains("changed while they were kept"), changed.getMessage());
    assertTrue(cut.size() <= count.bytes(), cut.size() + " > " + count.bytes());
  }

  @Test
  void countingStopsOnceTheHeadersAlonePassTheLimit() throws Exception {
    Path work = Files.createDirectories(tmp.resolve("work"));
    Path venv = Files.createDirectories(work.resolve("venv"));
    for (int i = 0; i < 100; i++) {
      Files.createFile(venv.resolve("empty" + i));
    }
    CacheArchive.Count count = new CacheArchive(work, PATHS, PRODUCER).count(10 * 512);
    assertFalse(count.complete());
    assertEquals(12, count.entries());
    assertTrue(count.bytes() > 10 * 512);
    CacheKept kept =
        new JobCache(tmp.resolve("cache"), 20 * 512).keep("d", "k", PATHS, work, PRODUCER);
    assertFalse(kept.kept());
    assertTrue(kept.describe().contains("at least"), kept.describe());
  }

  @Test
  void theProducerComesBackWithTheCacheAndAnOlderRunnersCacheHasNone() throws Exception {
    Path work = Files.createDirectories(tmp.resolve("work"));
    Files.createDirectories(work.resolve("venv"));
    Files.writeString(work.resolve("venv/tool"), "tool");
    JobCache cache = new JobCache(tmp.resolve("cache"), 1 << 20);
    cache.keep("demo", "k", PATHS, work, PRODUCER);
    try (CacheEntry entry = cache.open("demo", "k")) {
      assertEquals(PRODUCER, entry.producer());
    }
    assertEquals(
        Optional.of(PRODUCER),
        cache.restore("demo", "k", PATHS, Files.createDirectories(tmp.resolve("a")), UID));

    // A tar as runners kept them before the producer record: no first entry outside work/.
    TarArchiveEntry file = new TarArchiveEntry("work/venv/tool");
    plant(cache, "demo", "old", file);
    try (CacheEntry entry = cache.open("demo", "old")) {
      assertEquals(CacheProducer.UNKNOWN, entry.producer());
    }
    Path fresh = Files.createDirectories(tmp.resolve("b"));
    assertEquals(
        Optional.of(CacheProducer.UNKNOWN), cache.restore("demo", "old", PATHS, fresh, UID));
    assertEquals("evil", Files.readString(fresh.resolve("venv/tool")));

    // A producer record anywhere but first is an entry outside the cache paths.
    TarArchiveEntry record = new TarArchiveEntry(CacheArchive.PRODUCER_ENTRY);
    plant(cache, "demo", "late", new TarArchiveEntry("work/venv/x"), record);
    Path late = Files.createDirectories(tmp.resolve("c"));
    assertThrows(IOException.class, () -> cache.restore("demo", "late", PATHS, late, UID));
  }

  @Test
  void refusesAHardLinkToAnythingButAFileItExtractedBeforeUnderTheCachePaths() throws Exception {
    JobCache cache = new JobCache(tmp.resolve("cache"), 1 << 20);
    int n = 0;
    for (String target :
        List.of("etc/passwd", "work/home/.bashrc", "work/venv/existing", "work/venv/x")) {
      TarArchiveEntry link = new TarArchiveEntry("work/venv/x", TarConstants.LF_LINK);
      link.setLinkName(target);
      plant(cache, "demo", "bad", new TarArchiveEntry("work/venv/ok"), link);
      Path fresh = Files.createDirectories(tmp.resolve("fresh" + n++));
      Files.createDirectories(fresh.resolve("venv"));
      Files.createDirectories(fresh.resolve("home"));
      Files.writeString(fresh.resolve("venv/existing"), "the clone's");
      Files.writeString(fresh.resolve("home/.bashrc"), "the clone's");
      assertThrows(
          IOException.class, () -> cache.restore("demo", "bad", PATHS, fresh, UID), target);
      assertFalse(Files.exists(fresh.resolve("venv/x"), LinkOption.NOFOLLOW_LINKS), target);
      assertEquals(1, Files.getAttribute(fresh.resolve("venv/existing"), "unix:nlink"), target);
      assertEquals(1, Files.getAttribute(fresh.resolve("home/.bashrc"), "unix:nlink"), target);
    }
    // The same link to a file the tar holds before it restores.
    TarArchiveEntry link = new TarArchiveEntry("work/venv/x", TarConstants.LF_LINK);
    link.setLinkName("work/venv/ok");
    plant(cache, "demo", "good", new TarArchiveEntry("work/venv/ok"), link);
    Path fresh = Files.createDirectories(tmp.resolve("fresh-good"));
    cache.restore("demo", "good", PATHS, fresh, UID);
    assertEquals(2, Files.getAttribute(fresh.resolve("venv/x"), "unix:nlink"));
  }

  /**
   * A setup that turns a directory on the way to a cache path into a link (say {@code /work/repo ->
   * /usr/lib}) would have the runner, root on the host, keep the host's files for the next job.
   */
  @Test
  void keepsNothingThroughALinkOnTheWayToACachePath() throws Exception {
    Path host = Files.createDirectories(tmp.resolve("host/node_modules"));
    Files.writeString(host.resolve("secret"), "the host's");
    Path work = Files.createDirectories(tmp.resolve("work"));
    Files.createSymbolicLink(work.resolve("repo"), tmp.resolve("host"));
    JobCache cache = new JobCache(tmp.resolve("cache"), 1 << 20);

    CacheKept kept = cache.keep("demo", "k", List.of("/work/repo/node_modules"), work, PRODUCER);
    assertFalse(kept.kept());
    assertTrue(kept.describe().contains("/work/repo on the way to"), kept.describe());
    assertFalse(cache.has("demo", "k"));
  }

  private static String only(Path dir) throws IOException {
    try (var list = Files.list(dir)) {
      return list.findFirst().orElseThrow().getFileName().toString();
    }
  }

  /** Writes a tar by hand where the cache would keep {@code repo}'s {@code key}. */
  private void plant(JobCache cache, String repo, String key, String entryName) throws Exception {
    plant(cache, repo, key, new TarArchiveEntry(entryName, true));
  }

  /**
   * Writes a tar of {@code entries} by hand where the cache would keep {@code repo}'s {@code key};
   * each regular file holds "evil".
   */
  private void plant(JobCache cache, String repo, String key, TarArchiveEntry... entries)
      throws Exception {
    Path work = Files.createDirectories(tmp.resolve("seed"));
    Files.createDirectories(work.resolve("venv"));
    cache.keep(repo, key, PATHS, work, PRODUCER);
    Path tar = tarOf(repo, key);
    try (OutputStream out = Files.newOutputStream(tar);
        TarArchiveOutputStream t = new TarArchiveOutputStream(out)) {
      byte[] data = bytes("evil");
      for (TarArchiveEntry entry : entries) {
        boolean regular = entry.getLinkFlag() == TarConstants.LF_NORMAL;
        if (regular) {
          entry.setSize(data.length);
        }
        t.putArchiveEntry(entry);
        if (regular) {
          t.write(data);
        }
        t.closeArchiveEntry();
      }
    }
  }

  /** The tar {@code tmp/cache} keeps for {@code repo}'s {@code key}. */
  private Path tarOf(String repo, String key) throws IOException {
    try (var dirs = Files.list(tmp.resolve("cache"))) {
      return dirs.filter(d -> d.getFileName().toString().startsWith(repo + "-"))
          .findFirst()
          .orElseThrow()
          .resolve(key + ".tar");
    }
  }

  /** A file of {@code size} apparent bytes and no data. */
  private static void sparse(Path file, long size) throws IOException {
    try (java.io.RandomAccessFile f = new java.io.RandomAccessFile(file.toFile(), "rw")) {
      f.setLength(size);
    }
  }

  private static long directorySize(Path dir) throws IOException {
    try (var walk = Files.walk(dir)) {
      return walk.filter(Files::isRegularFile).mapToLong(p -> p.toFile().length()).sum();
    }
  }

  private static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private static long currentUid() {
    try {
      return (Integer)
          Files.getAttribute(Path.of(System.getProperty("java.io.tmpdir")), "unix:uid");
    } catch (IOException e) {
      return 0;
    }
  }
}
