package ai.spboucher.spbgit.builtinagent.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.spboucher.spbgit.builtinagent.BreachSignal;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ToolBoxTest {
  private static final ObjectMapper JSON = new ObjectMapper();

  @TempDir Path temp;
  Path root;
  ToolBox tools;

  @BeforeEach
  void setUp() throws Exception {
    root = Files.createDirectories(temp.resolve("repo"));
    Files.createDirectories(root.resolve(".git"));
    Files.writeString(root.resolve(".git/HEAD"), "ref: refs/heads/main\n");
    Files.createDirectories(root.resolve("src"));
    Files.writeString(
        root.resolve("src/App.java"), "class App {\n  // TODO one\n  // TODO two\n}\n");
    Files.writeString(root.resolve("README.md"), "# Title\n\nHello world\n");
    tools =
        new ToolBox(
            new Workspace(root),
            new BreachSignal(temp.resolve(".spb/breach")),
            Duration.ofSeconds(2));
  }

  private ToolResult call(String name, Map<String, ?> args) throws Exception {
    return tools.execute(name, JSON.writeValueAsString(args));
  }

  @Test
  void listsSortedAndHidesGit() throws Exception {
    ToolResult result = call("list_files", Map.of());

    assertFalse(result.error());
    assertEquals("README.md\nsrc/\nsrc/App.java", result.content());
    assertEquals("3 entries", result.detail());
  }

  @Test
  void listingStopsAtItsCap() throws Exception {
    Files.createDirectories(root.resolve("many"));
    for (int i = 0; i < FileTools.LIST_CAP + 20; i++) {
      Files.writeString(root.resolve("many/f" + i), "");
    }

    ToolResult result = call("list_files", Map.of("path", "many"));

    assertEquals(FileTools.LIST_CAP + 1, result.content().lines().count());
    assertTrue(
        result.content().endsWith("20 more not shown: list a subdirectory]"), result.content());
  }

  @Test
  void readsWholeFilesAndPagesByLines() throws Exception {
    assertEquals(
        "# Title\n\nHello world\n", call("read_file", Map.of("path", "README.md")).content());
    assertEquals(
        "\nHello world\n[lines 2-3 of 3]",
        call("read_file", Map.of("path", "README.md", "offset", 2)).content());
    assertEquals(
        "# Title\n[lines 1-1 of 3; continue with offset=2]",
        call("read_file", Map.of("path", "README.md", "limit", "1")).content());
    assertTrue(call("read_file", Map.of("path", "README.md", "offset", 9)).error());
  }

  @Test
  void readingIsCappedAt64KiB() throws Exception {
    String line = "x".repeat(99) + "\n";
    Files.writeString(root.resolve("big.txt"), line.repeat(2000));

    ToolResult result = call("read_file", Map.of("path", "big.txt"));

    assertFalse(result.error());
    assertTrue(
        result.content().getBytes(StandardCharsets.UTF_8).length <= FileTools.READ_CAP + 100);
    assertTrue(
        result.content().endsWith("[lines 1-655 of 2000; continue with offset=656]"),
        result.content().substring(result.content().length() - 80));
  }

  @Test
  void refusesBinaryFilesAndDirectories() throws Exception {
    Files.write(root.resolve("image.png"), new byte[] {(byte) 0x89, 'P', 'N', 'G', 0, 0, 1});

    assertTrue(call("read_file", Map.of("path", "image.png")).content().contains("binary file"));
    assertTrue(call("read_file", Map.of("path", "src")).content().contains("not a regular file"));
    assertTrue(
        call("read_file", Map.of("path", "missing.txt"))
            .content()
            .contains("missing.txt does not exist"));
  }

  @Test
  void searchesWithARegexAndReportsPathAndLine() throws Exception {
    ToolResult result = call("search", Map.of("pattern", "TODO \\w+"));

    assertEquals("src/App.java:2: // TODO one\nsrc/App.java:3: // TODO two\n", result.content());
    assertEquals("2 matches", result.detail());
    assertEquals(
        "no matches in 1 text files",
        call("search", Map.of("pattern", "TODO", "path", "README.md")).content());
    assertTrue(
        call("search", Map.of("pattern", "([a-z"))
            .content()
            .startsWith("invalid regular expression"));
  }

  @Test
  void searchNeverLooksIntoGit() throws Exception {
    assertEquals(
        "no matches in 2 text files", call("search", Map.of("pattern", "refs/heads")).content());
  }

  @Test
  void searchStopsAtItsMatchCap() throws Exception {
    Files.writeString(root.resolve("many.txt"), "match\n".repeat(FileTools.SEARCH_MATCHES + 50));

    ToolResult result = call("search", Map.of("pattern", "match", "path", "many.txt"));

    assertEquals(FileTools.SEARCH_MATCHES + 1, result.content().lines().count());
    assertTrue(
        result.content().endsWith("[stopped at 100 matches: narrow the pattern or the path]"));
  }

  @Test
  void aCatastrophicRegexIsAbandonedAtTheTimeLimit() throws Exception {
    Files.writeString(root.resolve("evil.txt"), "a".repeat(28) + "!\n");

    long started = System.nanoTime();
    ToolResult result = call("search", Map.of("pattern", "(.*a){20}$", "path", "evil.txt"));

    assertTrue(System.nanoTime() - started < 10_000_000_000L);
    assertTrue(result.content().contains("the pattern is too slow"), result.content());
  }

  @Test
  void writesNewFilesWithTheirDirectories() throws Exception {
    ToolResult result =
        call("write_file", Map.of("path", "docs/guide/intro.md", "content", "Intro\n"));

    assertFalse(result.error(), result.content());
    assertEquals("Intro\n", Files.readString(root.resolve("docs/guide/intro.md")));
    assertEquals("created 6 B", result.detail());
    assertEquals(
        "overwrote 3 B",
        call("write_file", Map.of("path", "docs/guide/intro.md", "content", "New")).detail());
  }

  @Test
  void refusesToWriteTooMuchOrIntoGit() throws Exception {
    String big = "x".repeat(FileTools.WRITE_CAP + 1);

    assertTrue(call("write_file", Map.of("path", "big.txt", "content", big)).error());
    assertFalse(Files.exists(root.resolve("big.txt")));
    ToolResult hook =
        call("write_file", Map.of("path", ".git/hooks/pre-commit", "content", "#!/bin/sh"));
    assertTrue(hook.error());
    assertTrue(hook.content().startsWith("refused: "));
    assertFalse(Files.exists(root.resolve(".git/hooks/pre-commit")));
  }

  @Test
  void replacesExactlyOneOccurrence() throws Exception {
    ToolResult ok =
        call("replace_in_file", Map.of("path", "README.md", "old", "Hello world", "new", "Hi"));
    assertFalse(ok.error(), ok.content());
    assertEquals("# Title\n\nHi\n", Files.readString(root.resolve("README.md")));
    assertEquals("line 3", ok.detail());

    ToolResult twice =
        call("replace_in_file", Map.of("path", "src/App.java", "old", "// TODO", "new", "//"));
    assertTrue(twice.error());
    assertTrue(twice.content().contains("occurs 2 times"), twice.content());

    ToolResult missing =
        call("replace_in_file", Map.of("path", "src/App.java", "old", "//  TODO one", "new", ""));
    assertTrue(missing.error());
    assertTrue(missing.content().startsWith("old text not found"), missing.content());
    assertEquals(
        "class App {\n  // TODO one\n  // TODO two\n}\n",
        Files.readString(root.resolve("src/App.java")));

    assertTrue(call("replace_in_file", Map.of("path", "README.md", "old", "", "new", "x")).error());
  }

  @Test
  void badArgumentsAreErrorResults() {
    assertTrue(tools.execute("read_file", "{}").content().contains("'path' is required"));
    assertTrue(
        tools.execute("read_file", "{\"path\": 3}").content().contains("'path' must be a string"));
    assertTrue(
        tools
            .execute("read_file", "{\"path\": \"README.md\", \"offset\": \"two\"}")
            .content()
            .contains("'offset' must be a whole number"));
    assertTrue(tools.execute("read_file", "[1]").content().contains("must be a JSON object"));
    assertTrue(
        tools
            .execute("read_file", "{\"path\":")
            .content()
            .startsWith("the arguments are not valid JSON"));
    assertFalse(tools.execute("list_files", "").error(), "no arguments at all is an empty object");
  }

  @Test
  void runsACommandInTheRootAndReportsItsExitCode() throws Exception {
    ToolResult result = call("run_command", Map.of("command", "pwd; echo oops >&2; exit 3"));

    assertFalse(result.error());
    assertTrue(result.content().startsWith("exit code 3 after "), result.content());
    assertTrue(result.content().contains(root.toRealPath() + "\noops\n"), result.content());
    assertTrue(result.detail().startsWith("exit 3, "), result.detail());
  }

  @Test
  void quickCommandsNeverLoseTheirOutput() throws Exception {
    for (int i = 0; i < 40; i++) {
      ToolResult result = call("run_command", Map.of("command", "echo run " + i));
      assertTrue(result.content().endsWith("\nrun " + i + "\n"), result.content());
    }
  }

  @Test
  void aCommandGetsNoInput() throws Exception {
    ToolResult result = call("run_command", Map.of("command", "cat; echo read-nothing"));

    assertTrue(result.content().startsWith("exit code 0"), result.content());
    assertTrue(result.content().endsWith("read-nothing\n"), result.content());
  }

  @Test
  void aCommandIsKilledWithItsChildrenAtItsTimeout() throws Exception {
    long started = System.nanoTime();
    ToolResult result =
        call(
            "run_command",
            Map.of(
                "command", "echo started; sleep 30 & sleep 30; echo never", "timeout_seconds", 1));

    assertTrue(System.nanoTime() - started < 10_000_000_000L);
    assertTrue(result.content().startsWith("timed out after 1 s: killed"), result.content());
    assertTrue(result.content().contains("started"), result.content());
    assertFalse(result.content().contains("never"));
    assertTrue(result.detail().startsWith("timed out after 1 s, "), result.detail());
  }

  @Test
  void theTimeoutIsCappedAtTwoMinutes() throws Exception {
    ToolResult result = call("run_command", Map.of("command", "true", "timeout_seconds", 100000));

    assertTrue(
        result.content().startsWith("exit code 0 (timeout capped at 120 s)"), result.content());
  }

  @Test
  void commandOutputKeepsItsStartAndItsEnd() throws Exception {
    ToolResult result =
        call(
            "run_command",
            Map.of(
                "command",
                "echo FIRST; i=0; while [ $i -lt 3000 ]; do echo line $i; i=$((i+1)); done; echo LAST"));

    String content = result.content();
    assertTrue(content.contains("FIRST"));
    assertTrue(content.endsWith("LAST\n"));
    assertTrue(content.contains("bytes of output omitted"));
    assertTrue(
        content.getBytes(StandardCharsets.UTF_8).length
            < CommandTool.OUTPUT_HEAD + CommandTool.OUTPUT_TAIL + 200);
  }

  @Test
  void cappedOutputCountsWhatItDrops() {
    CommandTool.CappedOutput output = new CommandTool.CappedOutput(4, 4);
    byte[] bytes = "0123456789".getBytes(StandardCharsets.US_ASCII);
    output.append(bytes, bytes.length);

    assertEquals(10, output.total());
    assertEquals("0123\n[... 2 bytes of output omitted ...]\n6789", output.text());
  }
}
