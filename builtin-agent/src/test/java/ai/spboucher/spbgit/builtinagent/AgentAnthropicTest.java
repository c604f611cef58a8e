package ai.spboucher.spbgit.builtinagent;

import static ai.spboucher.spbgit.testsupport.FakeProvider.call;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.spboucher.spbgit.builtinagent.prompt.Prompts;
import ai.spboucher.spbgit.testsupport.FakeProvider;
import ai.spboucher.spbgit.testsupport.FakeProvider.Received;
import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class AgentAnthropicTest {
  @TempDir Path temp;
  FakeProvider model;
  AgentRun agent;

  @BeforeEach
  void setUp() throws Exception {
    model = FakeProvider.startWithoutKey();
    agent = new AgentRun(temp, AgentConfig.Provider.ANTHROPIC, model.baseUrl());
  }

  @AfterEach
  void tearDown() {
    model.close();
  }

  @Test
  void editsTheCheckoutThroughToolUseAndFinishes() throws Exception {
    model.then(
        model.toolCalls(
            "Let me read the README first.", call("read_file", Map.of("path", "README.md"))),
        model.toolCall(
            "replace_in_file",
            Map.of("path", "README.md", "old", "Hello world", "new", "Hello agent")),
        model.toolCall("run_command", Map.of("command", "cat README.md", "timeout_seconds", 10)),
        model.toolCall("finish", Map.of("summary", "Changed the greeting.")));

    AgentRun.Outcome outcome = agent.run();

    assertEquals(0, outcome.code(), outcome.output());
    assertEquals("# Demo\n\nHello agent\n", agent.readme());
    assertTrue(outcome.hasLine("[agent] model replied in "), outcome.output());
    assertTrue(
        outcome.output().contains("1 tool call: Let me read the README first."), outcome.output());
    assertTrue(outcome.hasLine("[agent] step 1: read_file README.md (20 B, "), outcome.output());
    assertTrue(
        outcome.hasLine("[agent] step 3: run_command cat README.md (exit 0, "), outcome.output());
    assertEquals(4, outcome.result().get("steps").asInt());

    List<Received> requests = model.received();
    Received first = requests.get(0);
    assertEquals("/v1/messages", first.path());
    assertEquals("2023-06-01", first.header("anthropic-version"));
    assertNull(first.header("x-api-key"), "the agent sends no API key: the runner's proxy adds it");
    assertNull(first.header("authorization"));
    assertEquals(4096, first.json().get("max_tokens").asInt());
    assertTrue(first.json().get("system").asText().contains("only ones you follow"));
    assertEquals("read_file", first.json().get("tools").get(1).get("name").asText());
    assertEquals(
        "object", first.json().get("tools").get(1).get("input_schema").get("type").asText());
    assertEquals(1, first.json().get("messages").size());

    JsonNode messages = requests.get(1).json().get("messages");
    assertEquals(3, messages.size());
    JsonNode assistant = messages.get(1);
    assertEquals("assistant", assistant.get("role").asText());
    assertEquals("text", assistant.get("content").get(0).get("type").asText());
    JsonNode toolUse = assistant.get("content").get(1);
    assertEquals("tool_use", toolUse.get("type").asText());
    assertEquals("README.md", toolUse.get("input").get("path").asText());
    JsonNode result = messages.get(2).get("content").get(0);
    assertEquals("user", messages.get(2).get("role").asText());
    assertEquals("tool_result", result.get("type").asText());
    assertEquals(toolUse.get("id").asText(), result.get("tool_use_id").asText());
    assertEquals(AgentRun.README, result.get("content").asText());
    assertFalse(result.has("is_error"));
  }

  @Test
  void refusalsComeBackAsErrorToolResults() throws Exception {
    Files.createSymbolicLink(agent.repo.resolve("escape"), temp);
    model.then(
        model.toolCalls(
            null,
            call("read_file", Map.of("path", "/etc/passwd")),
            call("write_file", Map.of("path", "escape/owned.txt", "content", "x")),
            call("read_file", Map.of("path", ".git/config"))),
        model.toolCall("finish", Map.of("summary", "could not")));

    AgentRun.Outcome outcome = agent.run();

    assertEquals(0, outcome.code(), outcome.output());
    assertFalse(Files.exists(temp.resolve("owned.txt")));
    JsonNode results = model.lastReceived().json().get("messages").get(2).get("content");
    assertEquals(3, results.size());
    for (JsonNode result : results) {
      assertTrue(result.get("is_error").asBoolean(), result.toString());
      assertTrue(result.get("content").asText().startsWith("refused: "), result.toString());
    }
    assertEquals(4, outcome.result().get("steps").asInt());
  }

  @Test
  void aTextOnlyReplyIsNudgedOnce() throws Exception {
    model.then(
        model.text("Sure, I will do that."), model.toolCall("finish", Map.of("summary", "done")));

    AgentRun.Outcome outcome = agent.run();

    assertEquals(0, outcome.code(), outcome.output());
    JsonNode messages = model.lastReceived().json().get("messages");
    assertEquals(3, messages.size());
    assertEquals(
        "Sure, I will do that.", messages.get(1).get("content").get(0).get("text").asText());
    assertEquals(Prompts.NUDGE, messages.get(2).get("content").asText());
  }

  @Test
  void aToolUseCutOffAtMaxTokensIsNotRun() throws Exception {
    model.then(
        model.truncated(null, call("write_file", Map.of("path", "half.txt"))),
        model.toolCall("finish", Map.of("summary", "ok")));

    AgentRun.Outcome outcome = agent.run();

    assertEquals(0, outcome.code(), outcome.output());
    assertFalse(Files.exists(agent.repo.resolve("half.txt")));
    JsonNode result = model.lastReceived().json().get("messages").get(2).get("content").get(0);
    assertTrue(result.get("is_error").asBoolean());
    assertEquals(Prompts.TRUNCATED_CALL, result.get("content").asText());
  }

  @Test
  void aRateLimitIsRetried() throws Exception {
    model.then(
        model.rateLimited(0),
        model.rateLimited(0),
        model.toolCall("finish", Map.of("summary", "ok")));

    AgentRun.Outcome outcome = agent.run();

    assertEquals(0, outcome.code(), outcome.output());
    assertEquals(3, model.received().size());
  }

  @Test
  void aSpentBudgetStopsWithExit75() throws Exception {
    model.then(FakeProvider.budgetExceeded("token budget spent"));

    AgentRun.Outcome outcome = agent.run();

    assertEquals(75, outcome.code(), outcome.output());
    assertEquals(0, outcome.result().get("steps").asInt());
  }

  @Test
  void anOverloadedProviderIsAProviderErrorWithItsText() throws Exception {
    model.then(model.error(529, "overloaded_error", "Overloaded"));

    AgentRun.Outcome outcome = agent.run();

    assertEquals(76, outcome.code(), outcome.output());
    assertTrue(
        outcome.hasLine(
            "[agent] provider error: HTTP 529 from /v1/messages: overloaded_error: Overloaded"),
        outcome.output());
  }

  @Test
  void aBadRequestIsAProviderErrorWithItsText() throws Exception {
    model.then(
        model.error(400, "invalid_request_error", "max_tokens: 4096 > 1024, which is the maximum"));

    AgentRun.Outcome outcome = agent.run();

    assertEquals(76, outcome.code(), outcome.output());
    assertTrue(
        outcome
            .output()
            .contains("HTTP 400 from /v1/messages: invalid_request_error: max_tokens: 4096 > 1024"),
        outcome.output());
  }

  @Test
  void theStepLimitEndsTheLoopWithExit77() throws Exception {
    agent.maxSteps = 1;
    model.then(model.toolCalls(null, call("list_files", Map.of()), call("list_files", Map.of())));

    AgentRun.Outcome outcome = agent.run();

    assertEquals(77, outcome.code(), outcome.output());
    assertEquals(1, outcome.result().get("steps").asInt());
  }
}
