package ai.spboucher.spbgit.runner;

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
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.commons.compress.archivers.tar.TarArchiveEntry;
import org.apache.commons.compress.archivers.tar.TarArchiveOutputStream;
import org.eclipse.jgit.lib.Repository;
import org.eclipse.jgit.storage.file.FileRepositoryBuilder;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class JobCacheTest {

  private static final int UID = (int) currentUid();
  private static final List<String> PATHS = List.of("/work/venv");

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
    assertTrue(cache.keep("demo", "k1", PATHS, work) > 0);

    Path fresh = Files.createDirectories(tmp.resolve("fresh"));
    assertFalse(
        cache.restore("other", "k1", PATHS, fresh, UID), "another repository's key never hits");
    assertTrue(cache.restore("demo", "k1", PATHS, fresh, UID));
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
    cache.keep("demo", "k", PATHS, work);

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
    cache.keep("a", "k1", PATHS, work);
    Files.setLastModifiedTime(
        tmp.resolve("cache").resolve(only(tmp.resolve("cache"))).resolve("k1.tar"),
        java.nio.file.attribute.FileTime.fromMillis(1000));
    cache.keep("b", "k2", PATHS, work);
    cache.keep("c", "k3", PATHS, work);
    assertFalse(cache.has("a", "k1"), "the oldest went");
    assertTrue(cache.has("b", "k2"));
    assertTrue(cache.has("c", "k3"));
    assertEquals(
        -1,
        new JobCache(tmp.resolve("small"), 1000).keep("a", "k", PATHS, work),
        "too large alone");
  }

  private static String only(Path dir) throws IOException {
    try (var list = Files.list(dir)) {
      return list.findFirst().orElseThrow().getFileName().toString();
    }
  }

  /** Writes a tar by hand where the cache would keep {@code repo}'s {@code key}. */
  private void plant(JobCache cache, String repo, String key, String entryName) throws Exception {
    Path work = Files.createDirectories(tmp.resolve("seed"));
    Files.createDirectories(work.resolve("venv"));
    cache.keep(repo, key, PATHS, work);
    Path tar;
    try (var dirs = Files.list(tmp.resolve("cache"))) {
      tar =
          dirs.filter(d -> d.getFileName().toString().startsWith(repo + "-"))
              .findFirst()
              .orElseThrow()
              .resolve(key + ".tar");
    }
    try (OutputStream out = Files.newOutputStream(tar);
        TarArchiveOutputStream t = new TarArchiveOutputStream(out)) {
      byte[] data = bytes("evil");
      TarArchiveEntry entry = new TarArchiveEntry(entryName, true);
      entry.setSize(data.length);
      t.putArchiveEntry(entry);
      t.write(data);
      t.closeArchiveEntry();
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
