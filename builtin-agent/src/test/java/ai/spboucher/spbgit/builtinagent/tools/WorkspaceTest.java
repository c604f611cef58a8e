package ai.spboucher.spbgit.builtinagent.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class WorkspaceTest {
  @TempDir Path temp;
  Path root;
  Path outside;
  Workspace workspace;

  @BeforeEach
  void setUp() throws Exception {
    root = Files.createDirectories(temp.resolve("repo"));
    outside = Files.createDirectories(temp.resolve("outside"));
    Files.writeString(outside.resolve("secret.txt"), "secret");
    Files.createDirectories(root.resolve(".git"));
    Files.writeString(root.resolve(".git/config"), "[core]");
    Files.createDirectories(root.resolve("src/main"));
    Files.writeString(root.resolve("src/main/App.java"), "class App {}");
    workspace = new Workspace(root);
  }

  @Test
  void acceptsPathsInsideTheRoot() throws Exception {
    assertEquals(
        root.toRealPath().resolve("src/main/App.java"), workspace.existing("src/main/App.java"));
    assertEquals(
        root.toRealPath().resolve("src/main/App.java"),
        workspace.existing("./src//main/./App.java"));
    assertEquals(root.toRealPath(), workspace.existing("."));
    assertEquals(root.toRealPath(), workspace.existing(""));
    assertEquals(
        root.toRealPath().resolve("new/dir/File.txt"), workspace.forWrite("new/dir/File.txt"));
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "../outside/secret.txt",
        "src/../../outside/secret.txt",
        "src/..",
        "..",
        "/etc/passwd",
        "~/x",
        ".git/config",
        ".git",
        "src/.git/hooks/pre-commit",
        ".GIT/config",
        ".spb/breach",
        "a\0b"
      })
  void refusesEscapesAndTheHarnessDirectories(String path) {
    assertThrows(PathRefusedException.class, () -> workspace.existing(path));
    assertThrows(PathRefusedException.class, () -> workspace.forWrite(path));
  }

  @Test
  void refusesASymlinkPointingOutside() throws Exception {
    Files.createSymbolicLink(root.resolve("link-dir"), outside);
    Files.createSymbolicLink(root.resolve("link-file"), outside.resolve("secret.txt"));

    assertThrows(PathRefusedException.class, () -> workspace.existing("link-dir/secret.txt"));
    assertThrows(PathRefusedException.class, () -> workspace.existing("link-file"));
    assertThrows(PathRefusedException.class, () -> workspace.forWrite("link-file"));
    assertThrows(PathRefusedException.class, () -> workspace.forWrite("link-dir/new.txt"));
    assertThrows(PathRefusedException.class, () -> workspace.forWrite("link-dir/deep/new.txt"));
  }

  @Test
  void refusesASymlinkIntoGit() throws Exception {
    Files.createSymbolicLink(root.resolve("gitdir"), root.resolve(".git"));

    PathRefusedException refused =
        assertThrows(PathRefusedException.class, () -> workspace.existing("gitdir/config"));
    assertTrue(refused.getMessage().contains(".git/"), refused.getMessage());
    assertThrows(PathRefusedException.class, () -> workspace.forWrite("gitdir/hooks/pre-commit"));
  }

  @Test
  void refusesADanglingSymlinkWhoseTargetWouldBeOutside() throws Exception {
    Files.createSymbolicLink(root.resolve("dangling"), outside.resolve("not-yet.txt"));
    Files.createSymbolicLink(root.resolve("dangling-dir"), outside.resolve("nowhere"));

    assertThrows(PathRefusedException.class, () -> workspace.forWrite("dangling"));
    assertThrows(PathRefusedException.class, () -> workspace.existing("dangling"));
    assertThrows(PathRefusedException.class, () -> workspace.forWrite("dangling-dir/x.txt"));
  }

  @Test
  void followsASymlinkThatStaysInside() throws Exception {
    Files.createSymbolicLink(root.resolve("alias"), root.resolve("src/main"));

    assertEquals(
        root.toRealPath().resolve("src/main/App.java"), workspace.existing("alias/App.java"));
    assertEquals(
        root.toRealPath().resolve("src/main/New.java"), workspace.forWrite("alias/New.java"));
  }

  @Test
  void refusesARootThatIsItselfReachedThroughASymlinkOnlyByRealPath() throws Exception {
    Path linkedRoot = Files.createSymbolicLink(temp.resolve("linked-root"), root);
    Workspace viaLink = new Workspace(linkedRoot);

    assertEquals(root.toRealPath(), viaLink.root());
    assertEquals(
        root.toRealPath().resolve("src/main/App.java"), viaLink.existing("src/main/App.java"));
  }

  @Test
  void reportsAMissingFileAsMissing() {
    assertThrows(NoSuchFileException.class, () -> workspace.existing("nope.txt"));
  }

  @Test
  void refusesToWriteBelowAFile() {
    assertThrows(PathRefusedException.class, () -> workspace.forWrite("src/main/App.java/x"));
  }
}
