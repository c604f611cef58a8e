package ai.spboucher.spbgit.runner;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.spboucher.spbgit.proto.EgressAttempt;
import ai.spboucher.spbgit.proto.JobEvent;
import ai.spboucher.spbgit.proto.JobStatus;
import ai.spboucher.spbgit.proto.Mode;
import ai.spboucher.spbgit.proto.ModelCall;
import ai.spboucher.spbgit.proto.StatusChange;
import ai.spboucher.spbgit.testsupport.FakeProvider;
import ai.spboucher.spbgit.testsupport.GitCli;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Whole llm jobs whose agent is a real coding-agent CLI from the agent image ({@code agent:
 * claude-code}, {@code codex}, {@code qwen-code}), run by a real runner against {@link
 * FakeProvider} as its provider, and exec jobs with the model endpoint: each CLI writes a file
 * through its own tool and the proposal has it; the spend the fake reported is the spend the runner
 * metered; the runner's key is nowhere in the container, the log or the data directories; what the
 * CLI tried to reach outside is refused and recorded; an agent the image lacks or the provider does
 * not speak ends {@code agent_unavailable} before anything runs. Each test starts the one runner it
 * needs: a job goes to whichever runner takes it first.
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class AgentJobsIT {

  /** Distinctive, so a leak anywhere is found by a plain search. */
  static final String KEY = "sk-agents-it-Zq7Vx3Lm9Np2Rt5Wk8Hj";

  static final String CLAUDE = "claude-test";
  static final String GPT = "gpt-test";
  static final String CONTENT = "written by the agent's own tool\n";
  static final String TARGET = "/work/repo/hello.txt";
  static final ObjectMapper JSON = new ObjectMapper();

  @TempDir static Path tmp;
  static JobTestBed bed;
  static Path keyDir;
  FakeProvider fake;
  Vertx runner;

  @BeforeAll
  static void start() throws Exception {
    JobTestBed.requireLlmAgent(JobTestBed.IMAGE);
    bed =
        JobTestBed.start(
            tmp,
            "240s",
            new JsonObject().put("model", CLAUDE).put("models", String.join(",", CLAUDE, GPT)));
    // Outside the data directories the test searches for the key.
    keyDir = Files.createTempDirectory("agents-it-key");
    bed.createRepo("demo", Map.of("README.md", "# Demo\nhello world\n"));
  }

  @BeforeEach
  void startFake() throws IOException {
    fake = FakeProvider.start(KEY);
  }

  @AfterEach
  void stopRunner() {
    if (runner != null) {
      bed.stopRunner(runner);
      runner = null;
    }
    fake.close();
  }

  @AfterAll
  static void stop() throws Exception {
    if (bed != null) {
      bed.close();
    }
  }

  // --- each CLI writes a file through its own tool
  // -----------------------------------------------------------------

  @Test
  void claudeCodeWritesAFileWithItsWriteToolAndTheProposalHasIt() throws Exception {
    startRunner("anthropic", CLAUDE, JobTestBed.IMAGE, Map.of());
    Conversation talk =
        new Conversation(
            "\"tool_result\"",
            // Its own fetch tool reaches outside first: the egress proxy refuses it.
            fake.toolCall(
                "WebFetch",
                json("url", "https://example.com/", "prompt", "What does it say?"),
                700,
                40),
            fake.toolCall("Write", json("file_path", TARGET, "content", CONTENT), 1200, 80),
            fake.text("I wrote hello.txt.", 1400, 12));
    talk.script(usesTool("Write"));

    List<EgressAttempt> outside = assertAgentWroteTheFile("claude-code", "2.1.328", CLAUDE, talk);
    // WebFetch asks api.anthropic.com about the domain before it fetches: refused, so it gives up.
    assertFalse(outside.isEmpty(), "its WebFetch was refused and recorded");
    // The betas its bodies rely on reach the provider (the real API refuses context_management
    // without them).
    String betas = fake.received().get(0).header("anthropic-beta");
    assertTrue(betas != null && betas.contains("claude-code-"), "anthropic-beta: " + betas);
  }

  @Test
  void codexWritesAFileWithApplyPatchAndTheProposalHasIt() throws Exception {
    startRunner("openai", GPT, JobTestBed.IMAGE, Map.of());
    String patch =
        "apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: hello.txt\n+"
            + CONTENT.strip()
            + "\n*** End Patch\nEOF\n";
    Conversation talk =
        new Conversation(
            "function_call_output",
            fake.toolCall("exec_command", json("cmd", patch), 2100, 95),
            fake.text("I added hello.txt.", 2300, 14));
    talk.script(usesTool("exec_command"));

    assertAgentWroteTheFile("codex", "0.169.0", GPT, talk);
    // The entrypoint starts Codex with its hosted web search disabled: no call offers the model a
    // search the provider would run past the job's allow-list, and none is refused for one.
    for (FakeProvider.Received call : fake.received()) {
      assertFalse(
          call.json().path("tools").findValuesAsText("type").contains("web_search"),
          "Codex offered its hosted web search: " + call.text());
    }
    List<String> refused =
        bed.modelCalls(lastJob).stream()
            .filter(call -> !call.getError().isEmpty())
            .map(call -> call.getStatus() + " " + call.getError())
            .toList();
    assertEquals(List.of(), refused, "no model call of the job was refused");
  }

  @Test
  void qwenCodeWritesAFileWithItsWriteFileToolAndTheProposalHasIt() throws Exception {
    startRunner("openai", GPT, JobTestBed.IMAGE, Map.of());
    Conversation talk =
        new Conversation(
            "\"role\":\"tool\"",
            fake.toolCall("write_file", json("file_path", TARGET, "content", CONTENT), 900, 60),
            fake.text("I wrote hello.txt.", 1000, 10));
    talk.script(usesTool("write_file"));

    assertAgentWroteTheFile("qwen-code", "0.24.4", GPT, talk);
  }

  /**
   * A conversation that answers by what the request carries, not by its place in the script: turn
   * {@code n} once the request holds {@code n} tool results ({@code resultMarker}); the last turn
   * is held until the test has looked inside the container. A CLI's retry or fallback (Claude Code
   * asks again without streaming when a stream fails) then gets the same turn again instead of the
   * next one.
   */
  final class Conversation {
    final String resultMarker;
    final List<FakeProvider.Responder> turns;
    final CountDownLatch resultSent = new CountDownLatch(1);
    final CountDownLatch inspected = new CountDownLatch(1);

    Conversation(String resultMarker, FakeProvider.Responder... turns) {
      this.resultMarker = resultMarker;
      this.turns = List.of(turns);
    }

    void script(Predicate<FakeProvider.Received> agentLoop) {
      fake.scriptOnly(agentLoop);
      for (int i = 0; i < 12; i++) {
        fake.then(
            request -> {
              int results =
                  request.text().split(java.util.regex.Pattern.quote(resultMarker), -1).length - 1;
              int turn = Math.min(results, turns.size() - 1);
              if (turn == turns.size() - 1) {
                resultSent.countDown();
                await(inspected);
              }
              return turns.get(turn).apply(request);
            });
      }
    }
  }

  /** Starts with "-", as an owner's list of steps does. */
  static final String TASK = "- Create hello.txt.\n- --version is not an option here.";

  /** The job {@link #assertAgentWroteTheFile} ran last. */
  String lastJob;

  /**
   * Runs a job of {@code agent}; while the final turn is held, looks for the key inside the running
   * container; then checks the proposal, the spend, the log, the data directories and the egress
   * record.
   */
  List<EgressAttempt> assertAgentWroteTheFile(
      String agent, String version, String model, Conversation talk) throws Exception {
    String id =
        create(
                new JsonObject()
                    // A Markdown list: each CLI must take it as its prompt, not as options.
                    .put("task", TASK)
                    .put("agent", agent)
                    .put("model", model)
                    .put("test_command", "grep -q 'written by the agent' hello.txt"))
            .getString("id");
    lastJob = id;

    assertTrue(
        talk.resultSent.await(150, TimeUnit.SECONDS),
        agent + " sent no tool result" + describeRequests() + "\n" + bed.log(id));
    String container = bed.jobContainers(id).get(0).getId();
    String processes = JobTestBed.assertAbsentFromContainer(container, KEY);
    assertTrue(processes.contains("/opt/spb/agents/"), "the CLI was running: " + processes);
    talk.inspected.countDown();

    StatusChange finished = bed.awaitFinishedEvent(id, Duration.ofSeconds(200));
    String log = bed.log(id);
    String context = "\n--- log ---\n" + log + describeRequests();
    assertEquals("ok", finished.getExitReason(), context);
    StatusChange started = statusOf(id, JobStatus.STARTED);
    assertEquals(agent, started.getAgent());
    assertEquals(version, started.getAgentVersion());
    assertTrue(log.contains("tests passed"), context);
    JsonObject job = bed.awaitFinished("demo", id);
    assertEquals("ok", job.getString("exit_reason"), job.encodePrettily());
    assertEquals(agent, job.getString("agent"), job.encodePrettily());
    assertEquals(version, job.getString("agent_version"), job.encodePrettily());

    GitCli.Result file =
        bed.git.ok(
            bed.gateway.repoDir("demo"), "show", "refs/agents/" + id + "/proposal:hello.txt");
    assertEquals(CONTENT, file.output(), context);

    FakeProvider.Usage reported = fake.reportedUsage();
    assertTrue(reported.inputTokens() > 0, "the fake reported usage" + context);
    assertEquals(
        reported.inputTokens() + reported.cacheReadTokens(), finished.getInputTokens(), context);
    assertEquals(reported.outputTokens(), finished.getOutputTokens(), context);
    JsonObject audited = finishedEntry(id);
    assertEquals(finished.getInputTokens(), audited.getLong("input_tokens"), audited.encode());
    assertEquals(finished.getOutputTokens(), audited.getLong("output_tokens"), audited.encode());
    List<ModelCall> calls = bed.modelCalls(id);
    assertEquals(fake.received().size(), calls.size(), "every call recorded" + context);
    assertEquals(
        finished.getInputTokens(), calls.stream().mapToLong(ModelCall::getInputTokens).sum());
    for (FakeProvider.Received received : fake.received()) {
      String sent =
          received.header("authorization") != null
              ? received.header("authorization")
              : received.header("x-api-key");
      assertTrue(sent != null && sent.contains(KEY), "the runner added its key" + context);
    }
    // JSON-escaped in the request: the task's lines reached the model whole, as the prompt.
    assertTrue(
        fake.received().get(0).text().contains("- --version is not an option here."),
        "the task is the CLI's prompt" + context);

    assertFalse(log.contains(KEY), "the key is in the log");
    assertKeyNotUnder(bed.gateway.dataDir);
    assertKeyNotUnder(tmp);
    return assertOutsideAttemptsRefused(id, context);
  }

  // --- a breach stops the CLI, its work is pushed as partial
  // -----------------------------------------------------------------

  @Test
  void aClaudeCodeJobOverItsBudgetIsStoppedAndPushesItsPartialWork() throws Exception {
    startRunner(
        "anthropic",
        CLAUDE,
        JobTestBed.IMAGE,
        Map.of("SPB_MODEL_TOKEN_BUDGET", "5000", "SPB_BREACH_GRACE", "20s"));
    // The turn after the Write spends the budget and starts a long command: the entrypoint stops
    // Claude Code on the runner's breach notice, whatever it is doing.
    fake.scriptOnly(usesTool("Write"));
    FakeProvider.Responder write =
        fake.toolCall("Write", json("file_path", TARGET, "content", CONTENT), 1000, 80);
    FakeProvider.Responder sleep =
        fake.toolCall("Bash", json("command", "sleep 120", "description", "wait"), 6000, 80);
    for (int i = 0; i < 8; i++) {
      fake.then(
          request ->
              request.text().contains("tool_result") ? sleep.apply(request) : write.apply(request));
    }
    String id = "budget-" + Long.toString(System.nanoTime(), 36);
    bed.publish(
        bed.request("demo", id, Mode.MODE_LLM, "Create hello.txt.", 200)
            .setAgent("claude-code")
            .build());

    StatusChange finished = bed.awaitFinishedEvent(id, Duration.ofSeconds(200));
    String log = bed.log(id);
    String context = "\n--- log ---\n" + log + describeRequests();
    assertEquals("budget_exceeded", finished.getExitReason(), context);
    assertTrue(log.contains("breach notice budget_exceeded"), context);
    // The turn reporting 6,000 input tokens in its message_start crosses the budget: the endpoint
    // cuts that stream there, with Anthropic's error event, before its tool call reaches Claude.
    assertTrue(
        bed.modelCalls(id).stream()
            .anyMatch(
                call ->
                    call.getStreamed()
                        && call.getError().startsWith("budget_exceeded: stream cut")),
        "a stream was cut mid-way" + context);
    String refs = bed.git.refs(bed.gateway.repoDir("demo"));
    assertFalse(refs.contains("refs/agents/" + id + "/proposal"), refs);
    GitCli.Result file =
        bed.git.ok(bed.gateway.repoDir("demo"), "show", "refs/agents/" + id + "/partial:hello.txt");
    assertEquals(CONTENT, file.output(), context);
  }

  // --- a provider that drops every stream midway: a clear error and a clean end
  // -----------------------------------------------------------------

  @Test
  void aClaudeCodeJobWhoseProviderDropsEveryStreamEndsCleanlyAndNamesTheDrop() throws Exception {
    startRunner("anthropic", CLAUDE, JobTestBed.IMAGE, Map.of());
    // Every call of the agent loop, its retries (CLAUDE_CODE_MAX_RETRIES=2 in spb-agent) and its
    // non-streamed fallback: cut after message_start and the first block's start, before any tool.
    fake.scriptOnly(usesTool("Write"));
    FakeProvider.Responder write =
        fake.toolCall("Write", json("file_path", TARGET, "content", CONTENT), 1000, 80);
    for (int i = 0; i < 40; i++) {
      fake.then(request -> write.apply(request).droppedAfter(2));
    }
    String id = "dropped-" + Long.toString(System.nanoTime(), 36);
    long started = System.nanoTime();
    bed.publish(
        bed.request("demo", id, Mode.MODE_LLM, "Create hello.txt.", 150)
            .setAgent("claude-code")
            .build());

    StatusChange finished = bed.awaitFinishedEvent(id, Duration.ofSeconds(170));
    long seconds = TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - started);
    String log = bed.log(id);
    List<ModelCall> calls = bed.modelCalls(id);
    String context =
        "\n--- log ---\n"
            + log
            + "\n--- calls ---\n"
            + calls.stream().map(c -> c.getPath() + " " + c.getError()).toList()
            + describeRequests();
    System.out.println(id + ": ended " + finished.getExitReason() + " after " + seconds + " s");
    // The CLI gives up on its own, well before the job's 150 s deadline: no hang.
    assertTrue(
        Set.of("agent_failed", "provider_error").contains(finished.getExitReason()), context);
    assertTrue(seconds < 120, seconds + " s" + context);
    // The CLI's last words name the endpoint's error for its last attempt, a non-streamed retry.
    assertTrue(
        log.contains("the provider closed the connection before answering"),
        "the log names the dropped call" + context);
    assertTrue(
        calls.stream().anyMatch(call -> call.getError().startsWith("upstream_dropped")), context);
    String refs = bed.git.refs(bed.gateway.repoDir("demo"));
    assertFalse(refs.contains("refs/agents/" + id + "/"), "nothing pushed: " + refs);
    assertFalse(log.contains(KEY), "the key is in the log");
  }

  // --- bad input: each a clear end before anything runs
  // ---------------------------------------------------------------------

  @Test
  void anAgentTheJobsImageDoesNotCarryEndsAgentUnavailable() throws Exception {
    String image = "spbgit/agents-it-no-claude:latest";
    buildImage(image, "qwen-code@0.24.4");
    startRunner("anthropic", CLAUDE, image, Map.of());
    String id = "no-claude-" + Long.toString(System.nanoTime(), 36);
    bed.publish(
        bed.request("demo", id, Mode.MODE_LLM, "Create hello.txt.", 60)
            .setAgent("claude-code")
            .build());

    StatusChange finished = bed.awaitFinishedEvent(id, Duration.ofSeconds(60));
    assertEquals("agent_unavailable", finished.getExitReason(), finished.getDetail());
    assertTrue(finished.getDetail().contains(image), finished.getDetail());
    assertTrue(finished.getDetail().contains("claude-code"), finished.getDetail());
    assertTrue(finished.getDetail().contains("qwen-code"), finished.getDetail());
    assertNothingRan(id);
  }

  @Test
  void anAgentThatDoesNotSpeakTheProvidersApiEndsAgentUnavailable() throws Exception {
    startRunner("anthropic", CLAUDE, JobTestBed.IMAGE, Map.of());
    String id = "codex-on-anthropic-" + Long.toString(System.nanoTime(), 36);
    bed.publish(
        bed.request("demo", id, Mode.MODE_LLM, "Create hello.txt.", 60).setAgent("codex").build());

    StatusChange finished = bed.awaitFinishedEvent(id, Duration.ofSeconds(60));
    assertEquals("agent_unavailable", finished.getExitReason(), finished.getDetail());
    assertTrue(finished.getDetail().contains("codex"), finished.getDetail());
    assertTrue(finished.getDetail().contains("openai"), finished.getDetail());
    assertTrue(finished.getDetail().contains("anthropic"), finished.getDetail());
    assertNothingRan(id);
  }

  @Test
  void anUnknownAgentEndsAgentUnavailable() throws Exception {
    startRunner("anthropic", CLAUDE, JobTestBed.IMAGE, Map.of());
    String id = "unknown-agent-" + Long.toString(System.nanoTime(), 36);
    bed.publish(
        bed.request("demo", id, Mode.MODE_LLM, "Create hello.txt.", 60).setAgent("aider").build());

    StatusChange finished = bed.awaitFinishedEvent(id, Duration.ofSeconds(60));
    assertEquals("agent_unavailable", finished.getExitReason(), finished.getDetail());
    assertTrue(finished.getDetail().contains("'aider'"), finished.getDetail());
    assertNothingRan(id);
  }

  // --- exec with the model endpoint
  // ------------------------------------------------------------------------------------

  @Test
  void anExecJobWithTheModelEndpointCallsItWithCurlAndIsMetered() throws Exception {
    startRunner("anthropic", CLAUDE, JobTestBed.IMAGE, Map.of());
    fake.then(fake.text("hello from the model", 321, 45));
    // The placeholder key, the base URL and the conventional variable are the entrypoint's.
    String command =
        "test \"$ANTHROPIC_BASE_URL\" = \"$SPB_MODEL_BASE_URL\" && test -n \"$ANTHROPIC_API_KEY\" && "
            + "curl -sS --fail-with-body -X POST \"$SPB_MODEL_BASE_URL/v1/messages\" "
            + "-H 'content-type: application/json' -H \"x-api-key: $ANTHROPIC_API_KEY\" "
            + "-H 'anthropic-version: 2023-06-01' "
            + "-d '{\"model\":\""
            + CLAUDE
            + "\",\"max_tokens\":64,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}' "
            + "> answer.json && env | grep -c '^SPB_MODEL_BASE_URL=http://127.0.0.1:3129$'";
    JsonObject created =
        create(
            new JsonObject()
                .put("task", "ask the model")
                .put("exec", command)
                .put("model", CLAUDE));
    assertTrue(created.getBoolean("exec_model"), created.encodePrettily());
    String id = created.getString("id");

    StatusChange finished = bed.awaitFinishedEvent(id, Duration.ofSeconds(90));
    String log = bed.log(id);
    assertEquals("ok", finished.getExitReason(), log + describeRequests());
    assertEquals(321, finished.getInputTokens(), log);
    assertEquals(45, finished.getOutputTokens(), log);
    assertEquals(1, bed.modelCalls(id).size());
    GitCli.Result answer =
        bed.git.ok(
            bed.gateway.repoDir("demo"), "show", "refs/agents/" + id + "/proposal:answer.json");
    assertTrue(answer.output().contains("hello from the model"), answer.output());
    assertFalse(answer.output().contains(KEY));
    assertFalse(log.contains(KEY));
    assertEquals(KEY, fake.received().get(0).header("x-api-key"));
    JsonObject audited = finishedEntry(id);
    assertEquals(321L, audited.getLong("input_tokens"), audited.encode());
    assertEquals(45L, audited.getLong("output_tokens"), audited.encode());
  }

  // --- helpers
  static JsonObject create(JsonObject body) throws Exception {
    var r = bed.createJob("demo", body);
    assertEquals(201, r.statusCode(), r.body());
    return new JsonObject(r.body());
  }

  static JsonObject finishedEntry(String id) throws Exception {
    List<JsonObject> finished =
        bed.auditEntries(id).stream()
            .filter(e -> "job_finished".equals(e.getString("event")))
            .toList();
    assertEquals(1, finished.size(), finished.toString());
    return finished.get(0);
  }

  // -----------------------------------------------------------------------------------------------------

  void startRunner(String provider, String model, String image, Map<String, String> extra)
      throws IOException {
    Map<String, String> env = new HashMap<>();
    env.put("SPB_MODEL_PROVIDER", provider);
    env.put("SPB_AGENT_IMAGE", image);
    // Only the base image: the test's tiny image has no variants.
    env.put("SPB_IMAGES", "base=" + image);
    env.put("SPB_LIMIT_MEMORY", "1g");
    env.put("SPB_LIMIT_DISK", "256m");
    env.put("SPB_LIMIT_PIDS", "512");
    env.putAll(extra);
    runner =
        bed.startRunner(
            "agents-" + provider + "-" + Long.toString(System.nanoTime(), 36),
            fake.runnerEnv(keyDir, model, env));
  }

  /** Waits for {@code latch}, at most two minutes. */
  static void await(CountDownLatch latch) {
    try {
      latch.await(120, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** {@code image}: the agent image with its {@code spb.agent.clis} label replaced. */
  static void buildImage(String image, String clisLabel) throws Exception {
    Path context = Files.createTempDirectory(tmp, "image");
    Files.writeString(
        context.resolve("Dockerfile"),
        "FROM " + JobTestBed.IMAGE + "\nLABEL spb.agent.clis=\"" + clisLabel + "\"\n");
    Process build =
        new ProcessBuilder("docker", "build", "-q", "-t", image, context.toString())
            .redirectErrorStream(true)
            .start();
    String output = new String(build.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertEquals(0, build.waitFor(), "docker build: " + output);
  }

  /** Ended before a container was made: no STARTED, no container, no model call, nothing pushed. */
  void assertNothingRan(String id) throws Exception {
    assertTrue(
        bed.statusEvents(id).stream()
            .map(JobEvent::getStatus)
            .noneMatch(s -> s.getStatus() == JobStatus.STARTED),
        "no STARTED");
    assertTrue(bed.jobContainers(id).isEmpty(), "no container");
    assertTrue(fake.received().isEmpty(), "no model call");
    assertFalse(bed.git.refs(bed.gateway.repoDir("demo")).contains("refs/agents/" + id + "/"));
    assertTrue(bed.log(id).contains("refused by runner"), bed.log(id));
  }

  StatusChange statusOf(String id, JobStatus status) throws Exception {
    return bed.statusEvents(id).stream()
        .map(JobEvent::getStatus)
        .filter(s -> s.getStatus() == status)
        .findFirst()
        .orElseThrow();
  }

  /**
   * Every attempt the job made besides its model calls and its git relay went to the egress proxy,
   * which refused it (the job's allow-list is empty) and recorded it; none hung the job.
   */
  List<EgressAttempt> assertOutsideAttemptsRefused(String id, String context) throws Exception {
    List<EgressAttempt> attempts = bed.egressAttempts(id);
    List<EgressAttempt> outside =
        attempts.stream().filter(a -> a.getVia().equals("proxy")).toList();
    System.out.println(
        id
            + ": outside attempts "
            + outside.stream()
                .map(a -> a.getMethod() + " " + a.getHost() + ":" + a.getPort())
                .toList());
    for (EgressAttempt attempt : outside) {
      assertFalse(attempt.getAllowed(), attempt + context);
      assertFalse(attempt.getFailure().isEmpty(), attempt + context);
    }
    assertEquals(
        fake.received().size(),
        attempts.stream().filter(a -> a.getVia().equals("model_endpoint")).count(),
        "each model call is an egress attempt too" + context);
    return outside;
  }

  /** No file under {@code dir} holds the key. */
  static void assertKeyNotUnder(Path dir) throws IOException {
    byte[] key = KEY.getBytes(StandardCharsets.US_ASCII);
    try (Stream<Path> files = Files.walk(dir)) {
      for (Path file : (Iterable<Path>) files.filter(Files::isRegularFile)::iterator) {
        if (Files.isReadable(file) && contains(file, key)) {
          throw new AssertionError("the key is in " + file);
        }
      }
    }
  }

  static boolean contains(Path file, byte[] needle) throws IOException {
    String text;
    try (InputStream in = Files.newInputStream(file)) {
      text = new String(in.readAllBytes(), StandardCharsets.ISO_8859_1);
    } catch (IOException e) {
      return false;
    }
    return text.contains(new String(needle, StandardCharsets.ISO_8859_1));
  }

  /** A request of the agent loop: it offers the CLI's file-writing tool. */
  static Predicate<FakeProvider.Received> usesTool(String name) {
    return request -> {
      if (request.body().length == 0) {
        return false;
      }
      try {
        for (var tool : request.json().path("tools")) {
          String toolName =
              tool.has("function")
                  ? tool.path("function").path("name").asText()
                  : tool.path("name").asText();
          if (name.equals(toolName)) {
            return true;
          }
        }
      } catch (RuntimeException e) {
        return false;
      }
      return false;
    };
  }

  String describeRequests() {
    StringBuilder out = new StringBuilder("\n--- requests to the fake ---\n");
    for (FakeProvider.Received r : fake.received()) {
      out.append(r.method())
          .append(' ')
          .append(r.path())
          .append(" stream=")
          .append(r.streamed())
          .append('\n');
    }
    return out.toString();
  }

  static String json(String... keyValues) {
    var node = JSON.createObjectNode();
    for (int i = 0; i < keyValues.length; i += 2) {
      node.put(keyValues[i], keyValues[i + 1]);
    }
    return node.toString();
  }
}
