package ai.spboucher.spbgit.builtinagent;

import ai.spboucher.spbgit.common.Settings;
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
    Settings s = Settings.of(env);
    String providerName = s.required("SPB_MODEL_PROVIDER").toLowerCase(Locale.ROOT);
    Provider provider =
        switch (providerName) {
          case "openai" -> Provider.OPENAI;
          case "anthropic" -> Provider.ANTHROPIC;
          default ->
              throw new IllegalArgumentException(
                  "SPB_MODEL_PROVIDER must be openai or anthropic, not '" + providerName + "'");
        };
    return new AgentConfig(
        provider,
        s.required("SPB_MODEL"),
        s.parsed("SPB_MODEL_URL", URI.create("http://127.0.0.1:3129"), AgentConfig::modelUrl),
        s.required("SPB_TASK"),
        s.verbatim("SPB_TEST_COMMAND", ""),
        s.path("SPB_AGENT_ROOT", Path.of("/work/repo")),
        s.path("SPB_AGENT_BREACH_FILE", Path.of("/work/.spb/breach")),
        s.path("SPB_AGENT_RESULT_FILE", null),
        s.integer("SPB_AGENT_MAX_STEPS", 40, 1, 1000),
        s.integer("SPB_AGENT_MAX_TOKENS", 8192, 256, 200_000),
        Duration.ofSeconds(s.integer("SPB_AGENT_MODEL_TIMEOUT", 300, 1, 3600)),
        s.verbatim("SPB_INSTRUCTIONS", ""));
  }

  private static URI modelUrl(String url) {
    URI uri;
    try {
      uri = URI.create(url.endsWith("/") ? url.substring(0, url.length() - 1) : url);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("SPB_MODEL_URL is not a URL: " + e.getMessage());
    }
    if (!"http".equals(uri.getScheme()) && !"https".equals(uri.getScheme())) {
      throw new IllegalArgumentException("SPB_MODEL_URL must be an http:// or https:// URL");
    }
    return uri;
  }
}
