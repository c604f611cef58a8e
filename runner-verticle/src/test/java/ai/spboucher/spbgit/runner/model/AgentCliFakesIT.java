package ai.spboucher.spbgit.runner.model;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import ai.spboucher.spbgit.testsupport.FakeProvider;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Each real coding-agent CLI a job may run (Claude Code, Codex, Qwen Code), at its pinned version,
 * on this host, in a fresh git repository, against {@link FakeProvider} streaming its API: the CLI
 * must stream, write the file through its own tool, send the tool's result back, and exit 0. The
 * CLIs come from {@code docker/job-image/fetch-agent-clis.sh}, the script the agent image installs
 * them with, so the test needs the npm registry once (tarballs are cached in {@code
 * ~/.cache/spbgit/npm}) and never skips.
 */
class AgentCliFakesIT {

  /** What each CLI is given as its key: the runner's endpoint adds the real one. */
  static final String PLACEHOLDER_KEY = "spb-placeholder";

  static final String CONTENT = "written by the agent's own tool\n";
  static final long TIMEOUT_SECONDS = 120;

  static Path clis;

  @TempDir Path dir;
  Path repo;
  Path home;
  FakeProvider fake;

  @BeforeAll
  static void fetchTheClis() throws Exception {
    Path root = Path.of("").toAbsolutePath().getParent();
    clis = root.resolve("runner-verticle/target/agent-clis");
    Process fetch =
        new ProcessBuilder(
                root.resolve("docker/job-image/fetch-agent-clis.sh").toString(), clis.toString())
            .redirectErrorStream(true)
            .start();
    String output = new String(fetch.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (!fetch.waitFor(10, TimeUnit.MINUTES) || fetch.exitValue() != 0) {
      fail(
          "fetch-agent-clis.sh failed (it needs npm and the registry, or a filled ~/.cache/spbgit/npm):\n"
              + output);
    }
  }

  @BeforeEach
  void startFakeAndRepository() throws Exception {
    fake = FakeProvider.start(PLACEHOLDER_KEY);
    repo = Files.createDirectories(dir.resolve("repo"));
    home = Files.createDirectories(dir.resolve("home"));
    Files.writeString(repo.resolve("README.md"), "# demo\n");
    git("init", "-q", "-b", "main");
    git("add", "README.md");
    git("-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-q", "-m", "init");
  }

  @AfterEach
  void stopFake() {
    fake.close();
  }

  // --- recipes: how the runner will run each CLI (docs/agents.md, "Agents")
  // -------------------------------------

  /** A command line and its environment. */
  record Recipe(List<String> command, Map<String, String> env) {}

  Recipe claudeCode(String task) {
    Map<String, String> env = baseEnv();
    env.put("ANTHROPIC_BASE_URL", fake.baseUrl());
    env.put("ANTHROPIC_API_KEY", PLACEHOLDER_KEY);
    env.put("DISABLE_TELEMETRY", "1");
    env.put("DISABLE_ERROR_REPORTING", "1");
    env.put("DISABLE_AUTOUPDATER", "1");
    env.put("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1");
    // Its default is 10 retries with backoff: minutes against a provider that keeps dropping the
    // stream.
    env.put("CLAUDE_CODE_MAX_RETRIES", "2");
    // acceptEdits, not bypassPermissions: Claude Code refuses to skip permissions as root, which
    // this host is.
    return new Recipe(
        List.of(
            clis.resolve("bin/claude").toString(),
            "-p",
            task,
            "--model",
            "claude-sonnet-4-5",
            "--permission-mode",
            "acceptEdits",
            "--output-format",
            "json"),
        env);
  }

  Recipe codex(String task) throws IOException {
    Map<String, String> env = baseEnv();
    env.put("CODEX_HOME", Files.createDirectories(home.resolve(".codex")).toString());
    env.put("SPB_MODEL_KEY", PLACEHOLDER_KEY);
    return new Recipe(
        List.of(
            clis.resolve("bin/codex").toString(),
            "exec",
            "-c",
            "model_provider=\"spb\"",
            "-c",
            "model_providers.spb.name=\"spb\"",
            "-c",
            "model_providers.spb.base_url=\"" + fake.baseUrl() + "/v1\"",
            "-c",
            "model_providers.spb.wire_api=\"responses\"",
            "-c",
            "model_providers.spb.env_key=\"SPB_MODEL_KEY\"",
            "-c",
            "model_providers.spb.stream_max_retries=1",
            "-c",
            "model_providers.spb.request_max_retries=1",
            // Plugins sync a curated catalogue from github.com and chatgpt.com at every start.
            "-c",
            "features.plugins=false",
            "-c",
            "analytics.enabled=false",
            "-c",
            "check_for_update_on_startup=false",
            "-m",
            "gpt-5.1-codex",
            "--dangerously-bypass-approvals-and-sandbox",
            "--json",
            task),
        env);
  }

  Recipe qwenCode(String task) throws IOException {
    Map<String, String> env = baseEnv();
    env.put("OPENAI_BASE_URL", fake.baseUrl() + "/v1");
    env.put("OPENAI_API_KEY", PLACEHOLDER_KEY);
    env.put("OPENAI_MODEL", "qwen3-coder-plus");
    env.put("QWEN_USAGE_STATISTICS_ENABLED", "false");
    env.put("QWEN_TELEMETRY_ENABLED", "false");
    env.put("QWEN_CODE_SUPPRESS_YOLO_WARNING", "1");
    // The managed-memory subagent would spend a model call after the task and write under ~/.qwen.
    Files.createDirectories(home.resolve(".qwen"));
    Files.writeString(
        home.resolve(".qwen/settings.json"),
        "{\"general\":{\"enableAutoUpdate\":false},"
            + "\"memory\":{\"enableManagedAutoMemory\":false},\"privacy\":{\"usageStatisticsEnabled\":false},"
            + "\"telemetry\":{\"enabled\":false}}\n");
    return new Recipe(
        List.of(
            clis.resolve("bin/qwen").toString(),
            "-p",
            task,
            "--auth-type",
            "openai",
            "--approval-mode",
            "yolo",
            "--output-format",
            "json"),
        env);
  }

  // --- each CLI writes a file through its own tool
  // --------------------------------------------------------------

  @Test
  void claudeCodeStreamsAnthropicMessagesAndWritesWithItsWriteTool() throws Exception {
    Path target = repo.resolve("hello.txt");
    fake.scriptOnly(usesTool("Write"))
        .then(
            fake.toolCall(
                "Write", json("file_path", target.toString(), "content", CONTENT), 1200, 80),
            fake.text("I wrote hello.txt.", 1400, 12));

    Result result = run(claudeCode("Create hello.txt."));

    assertWrote(result, target);
    List<FakeProvider.Received> turns = scriptedTurns("Write");
    for (FakeProvider.Received turn : turns) {
      assertEquals("/v1/messages", turn.path());
      assertEquals(PLACEHOLDER_KEY, turn.header("x-api-key"));
    }
    assertTrue(
        turns.get(1).text().contains("tool_result"), "the second turn carries the Write result");
    JsonNode usage = FakeProvider.JSON.readTree(result.output()).path("usage");
    assertCounted(usage.path("input_tokens").asLong(), usage.path("output_tokens").asLong());
  }

  @Test
  void codexStreamsResponsesAndWritesWithItsApplyPatch() throws Exception {
    Path target = repo.resolve("hello.txt");
    // Codex runs apply_patch itself when the model puts it in exec_command ("apply patch / patch:
    // completed").
    String patch =
        "apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: hello.txt\n+"
            + CONTENT.strip()
            + "\n*** End Patch\nEOF\n";
    fake.scriptOnly(usesTool("exec_command"))
        .then(
            fake.toolCall("exec_command", json("cmd", patch), 2100, 95),
            fake.text("I added hello.txt.", 2300, 14));

    Result result = run(codex("Create hello.txt."));

    assertWrote(result, target);
    List<FakeProvider.Received> turns = scriptedTurns("exec_command");
    for (FakeProvider.Received turn : turns) {
      assertEquals("/v1/responses", turn.path());
      assertEquals("Bearer " + PLACEHOLDER_KEY, turn.header("authorization"));
    }
    assertTrue(
        turns.get(1).text().contains("function_call_output"),
        "the second turn carries the patch result");
    JsonNode usage = lastJsonLine(result.output(), "turn.completed").path("usage");
    assertCounted(usage.path("input_tokens").asLong(), usage.path("output_tokens").asLong());
  }

  @Test
  void qwenCodeStreamsChatCompletionsWithUsageAndWritesWithItsWriteFileTool() throws Exception {
    Path target = repo.resolve("hello.txt");
    fake.scriptOnly(usesTool("write_file"))
        .then(
            fake.toolCall(
                "write_file", json("file_path", target.toString(), "content", CONTENT), 900, 60),
            fake.text("I wrote hello.txt.", 1000, 10));

    Result result = run(qwenCode("Create hello.txt."));

    assertWrote(result, target);
    List<FakeProvider.Received> turns = scriptedTurns("write_file");
    for (FakeProvider.Received turn : turns) {
      assertEquals("/v1/chat/completions", turn.path());
      assertEquals("Bearer " + PLACEHOLDER_KEY, turn.header("authorization"));
      assertTrue(
          turn.json().path("stream_options").path("include_usage").asBoolean(),
          "qwen-code asks for the usage chunk itself");
    }
    assertTrue(
        turns.get(1).text().contains("\"role\":\"tool\""),
        "the second turn carries the write result");
    JsonNode usage =
        lastJsonLine(FakeProvider.JSON.readTree(result.output()), "result").path("usage");
    assertCounted(usage.path("input_tokens").asLong(), usage.path("output_tokens").asLong());
  }

  // --- a provider that drops every stream: each CLI gives up soon, non-zero, having written
  // nothing ------------

  @Test
  void claudeCodeGivesUpWhenEveryStreamIsDropped() throws Exception {
    // Three streamed attempts (CLAUDE_CODE_MAX_RETRIES=2), then one without streaming, its
    // fallback.
    assertGivesUp(claudeCode("Create hello.txt."), "Write", 3, 1);
  }

  @Test
  void codexGivesUpWhenEveryStreamIsDropped() throws Exception {
    assertGivesUp(codex("Create hello.txt."), "exec_command", 2, 0);
  }

  @Test
  void qwenCodeGivesUpWhenEveryStreamIsDropped() throws Exception {
    assertGivesUp(qwenCode("Create hello.txt."), "write_file", 3, 0);
  }

  /**
   * Every call is cut, a stream after three events, inside a call of {@code tool}; the CLI makes
   * {@code streamed} streamed calls and {@code unstreamed} others (its retries as the recipe sets
   * them) and exits non-zero.
   */
  void assertGivesUp(Recipe recipe, String tool, int streamed, int unstreamed) throws Exception {
    Path target = repo.resolve("hello.txt");
    String arguments =
        tool.equals("exec_command")
            ? json("cmd", "echo x > " + target)
            : json("file_path", target.toString(), "content", CONTENT);
    FakeProvider.Responder cut =
        request -> fake.toolCall(tool, arguments, 10, 10).apply(request).droppedAfter(3);
    for (int i = 0; i < 10; i++) {
      fake.then(cut);
    }
    long started = System.nanoTime();

    Result result = run(recipe);

    long seconds = (System.nanoTime() - started) / 1_000_000_000L;
    String context =
        "\n--- CLI output ---\n"
            + result.output()
            + "\n--- CLI errors ---\n"
            + result.errors()
            + describeRequests();
    System.out.println("gave up after " + seconds + " s" + context);
    assertTrue(result.exit() != 0, "exit code " + result.exit() + context);
    assertEquals(
        streamed,
        fake.received().stream().filter(FakeProvider.Received::streamed).count(),
        "streamed calls" + context);
    assertEquals(streamed + unstreamed, fake.received().size(), "calls" + context);
    assertTrue(Files.notExists(target), "a cut tool call must not run" + context);
    assertEquals(new FakeProvider.Usage(0, 0, 0), fake.reportedUsage());
  }

  // --- helpers
  // -----------------------------------------------------------------------------------------------

  record Result(int exit, String output, String errors) {}

  /** A clean environment: nothing of the build's own (keys, proxies, HOME) reaches the CLI. */
  Map<String, String> baseEnv() {
    Map<String, String> env = new HashMap<>();
    env.put("PATH", "/usr/local/bin:/usr/bin:/bin");
    env.put("HOME", home.toString());
    env.put("LANG", "C.UTF-8");
    env.put("TERM", "dumb");
    env.put("CI", "true");
    return env;
  }

  Result run(Recipe recipe) throws Exception {
    Path out = dir.resolve("cli.out");
    Path err = dir.resolve("cli.err");
    ProcessBuilder builder =
        new ProcessBuilder(recipe.command())
            .directory(repo.toFile())
            .redirectInput(ProcessBuilder.Redirect.from(Path.of("/dev/null").toFile()))
            .redirectOutput(out.toFile())
            .redirectError(err.toFile());
    builder.environment().clear();
    builder.environment().putAll(recipe.env());
    Process process = builder.start();
    if (!process.waitFor(TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
      process.descendants().forEach(ProcessHandle::destroyForcibly);
      process.destroyForcibly().waitFor();
      fail(
          "the CLI did not finish in "
              + TIMEOUT_SECONDS
              + " s:\n"
              + Files.readString(out)
              + Files.readString(err)
              + describeRequests());
    }
    return new Result(process.exitValue(), Files.readString(out), Files.readString(err));
  }

  /**
   * The file holds the scripted content, the CLI exited 0, and every scripted turn was streamed.
   */
  void assertWrote(Result result, Path target) throws IOException {
    String context =
        "\n--- CLI output ---\n"
            + result.output()
            + "\n--- CLI errors ---\n"
            + result.errors()
            + describeRequests();
    // The report file keeps what each CLI printed and asked for: the facts docs/agents.md records.
    System.out.println(context);
    assertEquals(0, result.exit(), "exit code" + context);
    assertTrue(Files.exists(target), "the CLI wrote no file" + context);
    assertEquals(CONTENT, Files.readString(target), context);
    assertEquals(
        0,
        fake.received().stream().filter(r -> FakeProvider.apiOf(r) == null).count(),
        "requests outside the model APIs" + context);
  }

  /**
   * The requests that took a scripted turn: both were streamed, and the usage reported covers them.
   */
  List<FakeProvider.Received> scriptedTurns(String tool) {
    List<FakeProvider.Received> turns =
        fake.received().stream().filter(usesTool(tool)).collect(Collectors.toList());
    assertEquals(2, turns.size(), "two scripted turns" + describeRequests());
    assertEquals(
        turns.size(),
        fake.received().size(),
        "no side calls besides the agent loop" + describeRequests());
    for (FakeProvider.Received turn : turns) {
      assertTrue(turn.streamed(), "streamed: " + turn.path() + " " + turn.text().substring(0, 200));
    }
    return turns;
  }

  /**
   * The CLI counted exactly the usage the fake reported in its streams: it read every usage event.
   */
  void assertCounted(long inputTokens, long outputTokens) {
    FakeProvider.Usage reported = fake.reportedUsage();
    assertEquals(reported.inputTokens(), inputTokens, "input tokens the CLI counted");
    assertEquals(reported.outputTokens(), outputTokens, "output tokens the CLI counted");
  }

  /** The last JSON event of {@code type} in a JSON-lines output (Codex --json). */
  static JsonNode lastJsonLine(String output, String type) throws IOException {
    JsonNode last = null;
    for (String line : output.split("\n")) {
      if (line.startsWith("{")) {
        JsonNode event = FakeProvider.JSON.readTree(line);
        last = type.equals(event.path("type").asText()) ? event : last;
      }
    }
    return last == null ? fail("no " + type + " event in:\n" + output) : last;
  }

  /** The last element of {@code type} in a JSON array output (Qwen Code --output-format json). */
  static JsonNode lastJsonLine(JsonNode events, String type) {
    JsonNode last = null;
    for (JsonNode event : events) {
      last = type.equals(event.path("type").asText()) ? event : last;
    }
    return last == null ? fail("no " + type + " event in " + events) : last;
  }

  /** A request of the agent loop: it offers the CLI's file-writing tool. */
  static Predicate<FakeProvider.Received> usesTool(String name) {
    return request -> {
      if (FakeProvider.apiOf(request) == null || request.body().length == 0) {
        return false;
      }
      for (JsonNode tool : request.json().path("tools")) {
        String toolName =
            tool.has("function")
                ? tool.path("function").path("name").asText()
                : tool.path("name").asText();
        if (name.equals(toolName)) {
          return true;
        }
      }
      return false;
    };
  }

  String describeRequests() {
    List<String> lines = new ArrayList<>();
    for (FakeProvider.Received r : fake.received()) {
      lines.add(
          r.method()
              + " "
              + r.path()
              + (r.query() == null ? "" : "?" + r.query())
              + " stream="
              + r.streamed()
              + " tools="
              + usesToolNames(r));
    }
    return "\n--- requests to the fake ---\n" + String.join("\n", lines);
  }

  static String usesToolNames(FakeProvider.Received r) {
    if (r.body().length == 0 || FakeProvider.apiOf(r) == null) {
      return "-";
    }
    List<String> names = new ArrayList<>();
    for (JsonNode tool : r.json().path("tools")) {
      names.add(
          tool.has("function")
              ? tool.path("function").path("name").asText()
              : tool.path("name").asText());
    }
    return names.toString();
  }

  static String json(String... keyValues) {
    ObjectNode node = FakeProvider.JSON.createObjectNode();
    for (int i = 0; i < keyValues.length; i += 2) {
      node.put(keyValues[i], keyValues[i + 1]);
    }
    return node.toString();
  }

  void git(String... args) throws Exception {
    List<String> command = new ArrayList<>(List.of("git"));
    command.addAll(List.of(args));
    Process process =
        new ProcessBuilder(command).directory(repo.toFile()).redirectErrorStream(true).start();
    String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (process.waitFor() != 0) {
      fail("git " + String.join(" ", args) + ": " + output);
    }
  }
}
