package ai.spboucher.spbgit.builtinagent;

import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;

/**
 * The agent's configuration, read from the environment the entrypoint passes (see docs/agents.md).
 *
 * @param provider SPB_MODEL_PROVIDER: the API dialect
 * @param model SPB_MODEL: the model name sent with each request
 * @param modelUrl SPB_MODEL_URL: base URL of the runner's model proxy (no API key: the proxy adds
 *     it)
 * @param task SPB_TASK: the owner's task text, raw (sanitised before use)
 * @param testCommand SPB_TEST_COMMAND: shown to the model as data; may be empty
 * @param root SPB_AGENT_ROOT: the checkout the tools are confined to
 * @param breachFile SPB_AGENT_BREACH_FILE: the runner's breach warning
 * @param resultFile SPB_AGENT_RESULT_FILE: where the result JSON is also written, or null
 * @param maxSteps SPB_AGENT_MAX_STEPS: tool calls allowed before exit 77
 * @param maxTokens SPB_AGENT_MAX_TOKENS: output tokens per reply (sent to Anthropic, which requires
 *     it)
 * @param modelTimeout SPB_AGENT_MODEL_TIMEOUT: seconds to wait for one model reply
 * @param instructions SPB_INSTRUCTIONS: the owner's standing instructions ({@code AGENTS.md} of the
 *     default branch, as the gateway read it at job creation), raw; empty for none
 */
public record AgentConfig(
    Provider provider,
    String model,
    URI modelUrl,
    String task,
    String testCommand,
    Path root,
    Path breachFile,
    Path resultFile,
    int maxSteps,
    int maxTokens,
    Duration modelTimeout,
    String instructions) {

  /** The two API dialects the agent speaks. */
  public enum Provider {
    OPENAI,
    ANTHROPIC
  }

  public static AgentConfig from(Map<String, String> env) {
    String providerName = required(env, "SPB_MODEL_PROVIDER").toLowerCase(Locale.ROOT);
    Provider provider =
        switch (providerName) {
          case "openai" -> Provider.OPENAI;
          case "anthropic" -> Provider.ANTHROPIC;
          default ->
              throw new IllegalArgumentException(
                  "SPB_MODEL_PROVIDER must be openai or anthropic, not '" + providerName + "'");
        };
    String url =
        env.getOrDefault("SPB_MODEL_URL", "").isBlank()
            ? "http://127.0.0.1:3129"
            : env.get("SPB_MODEL_URL").trim();
    URI modelUrl;
    try {
      modelUrl = URI.create(url.endsWith("/") ? url.substring(0, url.length() - 1) : url);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("SPB_MODEL_URL is not a URL: " + e.getMessage());
    }
    if (!"http".equals(modelUrl.getScheme()) && !"https".equals(modelUrl.getScheme())) {
      throw new IllegalArgumentException("SPB_MODEL_URL must be an http:// or https:// URL");
    }
    String resultFile = env.getOrDefault("SPB_AGENT_RESULT_FILE", "");
    return new AgentConfig(
        provider,
        required(env, "SPB_MODEL"),
        modelUrl,
        required(env, "SPB_TASK"),
        env.getOrDefault("SPB_TEST_COMMAND", ""),
        Path.of(env.getOrDefault("SPB_AGENT_ROOT", "/work/repo")),
        Path.of(env.getOrDefault("SPB_AGENT_BREACH_FILE", "/work/.spb/breach")),
        resultFile.isBlank() ? null : Path.of(resultFile),
        number(env, "SPB_AGENT_MAX_STEPS", 40, 1, 1000),
        number(env, "SPB_AGENT_MAX_TOKENS", 8192, 256, 200_000),
        Duration.ofSeconds(number(env, "SPB_AGENT_MODEL_TIMEOUT", 300, 1, 3600)),
        env.getOrDefault("SPB_INSTRUCTIONS", ""));
  }

  private static String required(Map<String, String> env, String name) {
    String value = env.get(name);
    if (value == null || value.isBlank()) {
      throw new IllegalArgumentException(name + " is missing");
    }
    return value.trim();
  }

  private static int number(Map<String, String> env, String name, int fallback, int min, int max) {
    String value = env.get(name);
    if (value == null || value.isBlank()) {
      return fallback;
    }
    try {
      int n = Integer.parseInt(value.trim());
      if (n < min || n > max) {
        throw new IllegalArgumentException(name + " must be between " + min + " and " + max);
      }
      return n;
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(name + " must be a whole number, not '" + value + "'");
    }
  }
}
