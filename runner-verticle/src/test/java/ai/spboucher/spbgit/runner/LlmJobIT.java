package ai.spboucher.spbgit.runner;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.spboucher.spbgit.proto.Mode;
import ai.spboucher.spbgit.proto.ModelCall;
import ai.spboucher.spbgit.proto.StatusChange;
import ai.spboucher.spbgit.testsupport.FakeProvider;
import ai.spboucher.spbgit.testsupport.GitCli;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Whole llm jobs with the real agent ({@code /opt/spb/agent.jar} in the agent image) against a fake
 * OpenAI provider scripted step by step: the proposal is what the script asked for, the key never
 * enters the container, the spend is what the provider reported, and a job over budget or with a
 * failing provider ends as it should. The image is {@code SPB_LLM_AGENT_IMAGE} (default {@link
 * JobTestBed#IMAGE}); without the agent in it these tests fail in CI and are skipped elsewhere.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class LlmJobIT {

  static final String IMAGE = System.getenv().getOrDefault("SPB_LLM_AGENT_IMAGE", JobTestBed.IMAGE);
  static final String KEY = "sk-llm-job-it-9e8d7c6b5a4f3e2d1c0b";
  static final String MODEL = "gpt-test";
  static final String TASK = "In README.md, replace the line 'hello world' with 'hello agent'.";

  @RegisterExtension
  static final LlmBed llm =
      LlmBed.withKey(KEY)
          .requireAgent(IMAGE)
          .runner("agent", MODEL, withImage(LlmBed.BUDGETED, IMAGE))
          .repo("demo", Map.of("README.md", "# Demo\nhello world\nbye\n", "src/app.txt", "app\n"));

  /** {@code env} with the runner's agent image set to {@code image}. */
  static Map<String, String> withImage(Map<String, String> env, String image) {
    Map<String, String> all = new java.util.HashMap<>(env);
    all.put("SPB_AGENT_IMAGE", image);
    return all;
  }

  @Test
  void theAgentFollowsTheModelAndPushesTheProposalItAskedFor() throws Exception {
    CountDownLatch inspected = new CountDownLatch(1);
    llm.fake.then(
        llm.fake.openAiToolCall("list_files", "{\"path\":\".\"}", 100, 20),
        llm.fake.openAiToolCall("read_file", "{\"path\":\"README.md\"}", 110, 20));
    llm.fake.then(
        request -> {
          // Holds the third answer while the test looks inside the running container.
          await(inspected);
          return llm.fake
              .openAiToolCall(
                  "replace_in_file",
                  "{\"path\":\"README.md\",\"old\":\"hello world\",\"new\":\"hello agent\"}",
                  120,
                  20)
              .apply(request);
        });
    llm.fake.then(
        llm.fake.openAiToolCall("finish", "{\"summary\":\"replaced the greeting\"}", 130, 20));
    int before = llm.fake.received().size();
    String id = "agent-" + Long.toString(System.nanoTime(), 36);
    llm.bed.publish(llm.bed.request("demo", id, Mode.MODE_LLM, TASK, 120).build());

    JobTestBed.awaitCondition(
        "the agent's third model call",
        Duration.ofSeconds(90),
        () -> llm.fake.received().size() >= before + 3);
    assertKeyAbsent(llm.bed.jobContainers(id).get(0).getId());
    inspected.countDown();

    StatusChange finished = llm.bed.awaitFinishedEvent(id, Duration.ofSeconds(120));
    String log = llm.bed.log(id);
    assertEquals("ok", finished.getExitReason(), log);
    assertFalse(log.contains(KEY));
    GitCli.Result diff =
        llm.bed.git.ok(
            llm.bed.gateway.repoDir("demo"), "diff", "main", "refs/agents/" + id + "/proposal");
    assertTrue(diff.output().contains("-hello world\n+hello agent"), diff.output());
    assertEquals(
        1,
        diff.output().lines().filter(l -> l.startsWith("+++")).count(),
        "only README.md changed");

    List<FakeProvider.Received> calls =
        llm.fake.received().subList(before, llm.fake.received().size());
    assertEquals(4, calls.size());
    for (FakeProvider.Received call : calls) {
      assertEquals("Bearer " + KEY, call.header("authorization"));
      assertEquals(MODEL, call.json().path("model").asText());
      assertFalse(call.json().path("stream").asBoolean(true));
    }
    JsonNode third = calls.get(2).json();
    assertTrue(
        third.path("messages").toString().contains("hello world"),
        "the file the agent read went back");
    assertEquals(460, finished.getInputTokens());
    assertEquals(80, finished.getOutputTokens());
    List<ModelCall> recorded = llm.bed.modelCalls(id);
    assertEquals(4, recorded.size());
    assertEquals(460, recorded.stream().mapToLong(ModelCall::getInputTokens).sum());
    JsonNode sent = new ObjectMapper().readTree(recorded.get(0).getRequest().toByteArray());
    assertEquals(
        calls.get(0).json().path("messages"),
        sent.path("messages"),
        "the recorded request is the one the agent sent");
  }

  @Test
  void aJobOverItsBudgetEndsBudgetExceededWithItsPartialWorkPushed() throws Exception {
    llm.fake.then(
        llm.fake.openAiToolCall(
            "replace_in_file",
            "{\"path\":\"README.md\",\"old\":\"bye\",\"new\":\"see you\"}",
            400,
            100),
        llm.fake.openAiToolCall("list_files", "{\"path\":\".\"}", 400, 100));
    String id = "budget-" + Long.toString(System.nanoTime(), 36);
    llm.bed.publish(llm.bed.request("demo", id, Mode.MODE_LLM, TASK, 120).build());

    StatusChange finished = llm.bed.awaitFinishedEvent(id, Duration.ofSeconds(120));
    String log = llm.bed.log(id);
    assertEquals("budget_exceeded", finished.getExitReason(), log);
    assertTrue(log.contains("breach notice budget_exceeded written"), log);
    assertEquals(800, finished.getInputTokens());
    assertEquals(200, finished.getOutputTokens());
    String refs = llm.bed.git.refs(llm.bed.gateway.repoDir("demo"));
    assertTrue(refs.contains("refs/agents/" + id + "/partial"), refs + "\n" + log);
    assertFalse(refs.contains("refs/agents/" + id + "/proposal"), refs);
    GitCli.Result diff =
        llm.bed.git.ok(
            llm.bed.gateway.repoDir("demo"), "diff", "main", "refs/agents/" + id + "/partial");
    assertTrue(diff.output().contains("+see you"), diff.output());
  }

  @Test
  void aFailingProviderEndsProviderError() throws Exception {
    llm.fake.then(
        FakeProvider.openAiError(
            500, "server_error", null, "The server had an error processing your " + "request."));
    String id = "provider-" + Long.toString(System.nanoTime(), 36);
    llm.bed.publish(llm.bed.request("demo", id, Mode.MODE_LLM, TASK, 120).build());

    StatusChange finished = llm.bed.awaitFinishedEvent(id, Duration.ofSeconds(120));
    assertEquals("provider_error", finished.getExitReason(), llm.bed.log(id));
    ModelCall call = llm.bed.modelCalls(id).get(0);
    assertEquals(500, call.getStatus());
    assertEquals("provider answered 500 (server_error)", call.getError());
  }

  // --- helpers
  // -------------------------------------------------------------------------------------------------

  static void requireAgent() throws Exception {
    JobTestBed.requireLlmAgent(IMAGE);
  }

  private static void await(CountDownLatch latch) {
    try {
      latch.await(60, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /**
   * Not in the configuration, the processes (the agent's JVM included), /work, /tmp or the file
   * system.
   */
  private static void assertKeyAbsent(String container) throws Exception {
    String processes = JobTestBed.assertAbsentFromContainer(container, KEY);
    assertTrue(processes.contains("agent.jar"), "the agent's JVM was listed: " + processes);
  }
}
