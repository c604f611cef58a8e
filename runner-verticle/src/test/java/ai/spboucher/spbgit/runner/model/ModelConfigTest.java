package ai.spboucher.spbgit.runner.model;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.spboucher.spbgit.runner.RunnerConfig;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ModelConfigTest {

  static final String KEY = "sk-test-0123456789";

  @TempDir Path tmp;

  static ModelConfig read(Map<String, String> env) {
    return ModelConfig.fromEnvironment(env);
  }

  static Map<String, String> openAi(String... more) {
    Map<String, String> env =
        new HashMap<>(
            Map.of(
                "SPB_MODEL_PROVIDER",
                "openai",
                "SPB_MODEL",
                "gpt-4o-mini",
                "SPB_MODEL_API_KEY",
                KEY));
    for (int i = 0; i < more.length; i += 2) {
      env.put(more[i], more[i + 1]);
    }
    return env;
  }

  @Test
  void withoutAProviderThereIsNoModelConfig() {
    assertNull(read(Map.of()));
    assertNull(
        RunnerConfig.from(RunnerConfig.fromEnvironment(Map.of("SPB_RUNNER_ID", "r1"))).model());
  }

  @Test
  void defaultsMatchTheDocs() {
    ModelConfig config = read(openAi());
    assertEquals(ModelProvider.OPENAI, config.provider());
    assertEquals(URI.create("https://api.openai.com"), config.baseUrl());
    assertEquals(
        URI.create("https://api.openai.com/v1/chat/completions"),
        config.upstream(ModelApi.CHAT_COMPLETIONS.path()));
    assertEquals(ModelConfig.DEFAULT_CONCURRENCY, config.concurrency());
    assertEquals(443, config.upstreamPort());
    assertEquals(List.of("gpt-4o-mini"), config.allowedModels());
    assertEquals(200_000, config.tokenBudget());
    assertEquals(Duration.ofSeconds(120), config.timeout());
    assertEquals(
        Duration.ofSeconds(30),
        RunnerConfig.from(RunnerConfig.fromEnvironment(Map.of("SPB_RUNNER_ID", "r1")))
            .breachGrace());
    ModelConfig anthropic =
        read(
            Map.of(
                "SPB_MODEL_PROVIDER",
                "Anthropic",
                "SPB_MODEL",
                "claude-sonnet-4-5",
                "SPB_MODEL_API_KEY",
                KEY));
    assertEquals(
        URI.create("https://api.anthropic.com/v1/messages/count_tokens"),
        anthropic.upstream(ModelApi.COUNT_TOKENS.path()));
  }

  @Test
  void readsEverySetting() {
    ModelConfig config =
        read(
            openAi(
                "SPB_MODEL_URL",
                "http://127.0.0.1:8000/v1/",
                "SPB_MODELS",
                "gpt-4o-mini, gpt-4o",
                "SPB_MODEL_TOKEN_BUDGET",
                "5000",
                "SPB_MODEL_TIMEOUT",
                "2m",
                "SPB_MODEL_CONCURRENCY",
                "2"));
    assertEquals(
        URI.create("http://127.0.0.1:8000/v1/chat/completions"),
        config.upstream(ModelApi.CHAT_COMPLETIONS.path()),
        "a base URL already ending in /v1 is not doubled");
    assertEquals(2, config.concurrency());
    assertEquals(8000, config.upstreamPort());
    assertEquals(List.of("gpt-4o-mini", "gpt-4o"), config.allowedModels());
    assertEquals(5000, config.tokenBudget());
    assertEquals(Duration.ofMinutes(2), config.timeout());
  }

  @Test
  void theKeyFileWinsAndLosesItsTrailingNewline() throws Exception {
    Path file = tmp.resolve("key");
    Files.writeString(file, "sk-from-file\n");
    assertEquals("sk-from-file", read(openAi("SPB_MODEL_API_KEY_FILE", file.toString())).apiKey());
    Files.writeString(file, "sk-crlf\r\n");
    assertEquals("sk-crlf", read(openAi("SPB_MODEL_API_KEY_FILE", file.toString())).apiKey());
  }

  @Test
  void neverPrintsTheKey() throws Exception {
    Path file = tmp.resolve("key");
    Files.writeString(file, KEY + "\n");
    ModelConfig config = read(openAi());
    assertFalse(config.toString().contains(KEY), config.toString());
    RunnerConfig runner =
        RunnerConfig.from(RunnerConfig.fromEnvironment(openAi("SPB_RUNNER_ID", "r1")));
    assertFalse(runner.toString().contains(KEY), runner.toString());
    IllegalArgumentException missing =
        assertThrows(
            IllegalArgumentException.class,
            () -> read(openAi("SPB_MODEL_API_KEY_FILE", tmp.resolve("absent").toString())));
    assertTrue(missing.getMessage().contains("absent"));
    IllegalArgumentException spaced =
        assertThrows(
            IllegalArgumentException.class,
            () -> read(openAi("SPB_MODEL_API_KEY", "sk-has space" + KEY)));
    assertFalse(spaced.getMessage().contains(KEY));
  }

  @Test
  void resolvesAJobsModel() {
    ModelConfig config = read(openAi("SPB_MODELS", "gpt-4o-mini,gpt-4o"));
    assertEquals("gpt-4o-mini", config.jobModel(""));
    assertEquals("gpt-4o", config.jobModel("gpt-4o"));
    IllegalArgumentException refused =
        assertThrows(IllegalArgumentException.class, () -> config.jobModel("o1-pro"));
    assertTrue(refused.getMessage().contains("o1-pro is not offered"), refused.getMessage());
  }

  @Test
  void failsFastOnIncompleteOrMalformedSettings() {
    assertThrows(
        IllegalArgumentException.class,
        () -> read(Map.of("SPB_MODEL_API_KEY", KEY)),
        "a key without a provider is a mistake, not a silent no-op");
    assertThrows(
        IllegalArgumentException.class, () -> read(openAi("SPB_MODEL_PROVIDER", "mistral")));
    assertThrows(
        IllegalArgumentException.class,
        () -> read(Map.of("SPB_MODEL_PROVIDER", "openai", "SPB_MODEL_API_KEY", KEY)));
    Map<String, String> keyless = openAi();
    keyless.remove("SPB_MODEL_API_KEY");
    assertThrows(IllegalArgumentException.class, () -> read(keyless));
    assertThrows(
        IllegalArgumentException.class,
        () -> read(openAi("SPB_MODELS", "gpt-4o")),
        "the default model must be allowed");
    assertThrows(IllegalArgumentException.class, () -> read(openAi("SPB_MODEL_URL", "ftp://x")));
    assertThrows(
        IllegalArgumentException.class, () -> read(openAi("SPB_MODEL_URL", "https://u:p@x")));
    assertThrows(IllegalArgumentException.class, () -> read(openAi("SPB_MODEL_TOKEN_BUDGET", "0")));
    assertThrows(
        IllegalArgumentException.class, () -> read(openAi("SPB_MODEL_TOKEN_BUDGET", "lots")));
    assertThrows(IllegalArgumentException.class, () -> read(openAi("SPB_MODEL", "bad model")));
    assertThrows(
        IllegalArgumentException.class,
        () ->
            RunnerConfig.from(
                RunnerConfig.fromEnvironment(
                    Map.of("SPB_RUNNER_ID", "r1", "SPB_BREACH_GRACE", "-5"))));
  }
}
