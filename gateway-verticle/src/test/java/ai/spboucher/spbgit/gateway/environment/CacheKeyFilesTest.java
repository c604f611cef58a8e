package ai.spboucher.spbgit.gateway.environment;

import static org.junit.jupiter.api.Assertions.assertEquals;

import ai.spboucher.spbgit.testsupport.GitCli;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import org.eclipse.jgit.lib.Repository;
import org.eclipse.jgit.storage.file.FileRepositoryBuilder;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The key files digest read from real repositories made by the git CLI, against the format written
 * out by hand here ({@link #expected}); the runner's JobCacheTest checks its own digest of a clone
 * against this class's.
 */
public class CacheKeyFilesTest {

  @TempDir Path tmp;

  /**
   * The documented format: SHA-256 over each path and its contents (a single -1 byte when missing),
   * each prefixed by its length in 8 bytes, in the order given (sorted by the caller).
   */
  public static String expected(String[] paths, byte[][] contents) throws Exception {
    MessageDigest sha = MessageDigest.getInstance("SHA-256");
    for (int i = 0; i < paths.length; i++) {
      byte[] path = paths[i].getBytes(StandardCharsets.UTF_8);
      byte[] bytes = contents[i] == null ? new byte[] {-1} : contents[i];
      sha.update(ByteBuffer.allocate(8).putLong(path.length).array());
      sha.update(path);
      sha.update(ByteBuffer.allocate(8).putLong(bytes.length).array());
      sha.update(bytes);
    }
    return HexFormat.of().formatHex(sha.digest());
  }

  private Optional<String> digest(FileSetup setup, String... paths) throws Exception {
    GitCli git = new GitCli(Files.createDirectories(tmp.resolve("home")));
    Path work = Files.createTempDirectory(tmp, "work");
    git.ok(work, "init", "-q", "-b", "main");
    Files.writeString(work.resolve("README.md"), "hello\n");
    setup.write(work);
    git.ok(work, "add", "-A");
    git.ok(work, "commit", "-q", "-m", "files");
    try (Repository repository =
        new FileRepositoryBuilder().setGitDir(work.resolve(".git").toFile()).build()) {
      return CacheKeyFiles.digest(repository, repository.resolve("HEAD"), List.of(paths));
    }
  }

  interface FileSetup {
    void write(Path work) throws Exception;
  }

  @Test
  void presentAndMissingFilesInPathOrderEachOnce() throws Exception {
    Optional<String> digest =
        digest(
            w -> {
              Files.writeString(w.resolve("requirements.txt"), "flask==3.0\n");
              Files.createDirectories(w.resolve("web"));
              Files.writeString(w.resolve("web/package-lock.json"), "{}\n");
            },
            "web/package-lock.json",
            "requirements.txt",
            "absent.lock",
            "README.md/under-a-file",
            "requirements.txt");
    assertEquals(
        Optional.of(
            expected(
                new String[] {
                  "README.md/under-a-file",
                  "absent.lock",
                  "requirements.txt",
                  "web/package-lock.json"
                },
                new byte[][] {
                  null, null, "flask==3.0\n".getBytes(StandardCharsets.UTF_8), "{}\n".getBytes()
                })),
        digest);
  }

  @Test
  void noKeyFilesIsTheDigestOfNothing() throws Exception {
    assertEquals(Optional.of(expected(new String[0], new byte[0][])), digest(w -> {}));
  }

  @Test
  void aLinkOnTheWayLeavesItToTheRunnersClone() throws Exception {
    assertEquals(
        Optional.empty(),
        digest(
            w -> {
              Files.createDirectories(w.resolve("real"));
              Files.writeString(w.resolve("real/requirements.txt"), "x\n");
              Files.createSymbolicLink(w.resolve("linked"), Path.of("real"));
            },
            "linked/requirements.txt"));
    assertEquals(
        Optional.empty(),
        digest(
            w -> Files.createSymbolicLink(w.resolve("requirements.txt"), Path.of("README.md")),
            "requirements.txt"));
  }

  @Test
  void gitattributesAboveAKeyFileLeavesItToTheRunnersClone() throws Exception {
    assertEquals(
        Optional.empty(),
        digest(
            w -> {
              Files.writeString(w.resolve(".gitattributes"), "*.txt text eol=crlf\n");
              Files.writeString(w.resolve("requirements.txt"), "x\n");
            },
            "requirements.txt"));
  }
}
