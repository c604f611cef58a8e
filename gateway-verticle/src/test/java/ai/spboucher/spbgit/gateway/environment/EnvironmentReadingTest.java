package ai.spboucher.spbgit.gateway.environment;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import ai.spboucher.spbgit.testsupport.GitCli;
import java.nio.file.Files;
import java.nio.file.Path;
import org.eclipse.jgit.lib.Repository;
import org.eclipse.jgit.storage.file.FileRepositoryBuilder;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Reading the file from real repositories made by the git CLI: what counts as the file, and what is
 * refused.
 */
class EnvironmentReadingTest {

  @TempDir Path tmp;

  private EnvironmentReading read(String branch, FileSetup setup) throws Exception {
    GitCli git = new GitCli(Files.createDirectories(tmp.resolve("home")));
    Path work = Files.createDirectories(tmp.resolve("work"));
    git.ok(work, "init", "-q", "-b", branch);
    Files.writeString(work.resolve("README.md"), "hello\n");
    Files.createDirectories(work.resolve(".spbgit"));
    setup.write(work);
    git.ok(work, "add", "-A");
    git.ok(work, "commit", "-q", "-m", "environment");
    try (Repository repository =
        new FileRepositoryBuilder().setGitDir(work.resolve(".git").toFile()).build()) {
      return EnvironmentReading.of(repository);
    }
  }

  interface FileSetup {
    void write(Path work) throws Exception;
  }

  @Test
  void readsTheBranchHeadNames() throws Exception {
    EnvironmentReading reading =
        read("trunk", w -> Files.writeString(w.resolve(".spbgit/agent.yml"), "image: node\n"));
    assertEquals("trunk", reading.branch());
    assertEquals("node", reading.require().image());
    assertEquals(reading.blob(), reading.require().blob());
  }

  @Test
  void aSymlinkIsNotAnEnvironmentFile() throws Exception {
    EnvironmentReading reading =
        read(
            "main",
            w -> {
              Files.writeString(w.resolve("elsewhere.yml"), "image: node\n");
              Files.createSymbolicLink(w.resolve(".spbgit/agent.yml"), Path.of("../elsewhere.yml"));
            });
    assertEquals(".spbgit/agent.yml: must be a regular file", reading.error().getMessage());
    assertNull(reading.environment());
  }

  @Test
  void aFileTooLargeIsRefusedBeforeItIsRead() throws Exception {
    EnvironmentReading reading =
        read(
            "main",
            w ->
                Files.writeString(
                    w.resolve(".spbgit/agent.yml"),
                    "# " + "x".repeat(EnvironmentFile.MAX_BYTES) + "\n"));
    assertEquals(".spbgit/agent.yml: is larger than 64 KiB", reading.error().getMessage());
  }

  @Test
  void aFileThatIsNotUtf8IsRefused() throws Exception {
    EnvironmentReading reading =
        read(
            "main",
            w ->
                Files.write(
                    w.resolve(".spbgit/agent.yml"),
                    new byte[] {'t', 'e', 's', 't', ':', ' ', (byte) 0xe9, '\n'}));
    assertEquals(".spbgit/agent.yml: is not UTF-8 text", reading.error().getMessage());
  }

  @Test
  void aDirectoryWithoutTheFileGivesTheDefaults() throws Exception {
    EnvironmentReading reading =
        read("main", w -> Files.writeString(w.resolve(".spbgit/other.yml"), "x: 1\n"));
    assertEquals(AgentEnvironment.NONE, reading.require());
    assertNull(reading.blob());
  }
}
