package ai.spboucher.spbgit.runner.model;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.net.http.HttpRequest;
import java.util.Locale;
import java.util.regex.Pattern;

/**
 * What differs between the two provider APIs the model endpoint speaks: the one path the agent may
 * call, how the runner's key is added upstream, and where the response reports its usage. Both are
 * answered without streaming.
 */
public enum ModelProvider {

  /** OpenAI Chat Completions, and servers compatible with it. */
  OPENAI("openai", "/v1/chat/completions", "https://api.openai.com") {
    @Override
    void prepare(ObjectNode body, String model) {
      super.prepare(body, model);
      // Only valid together with stream: true, which is never sent.
      body.remove("stream_options");
    }

    @Override
    void authorize(HttpRequest.Builder upstream, String apiKey, String agentVersionHeader) {
      upstream.header("Authorization", "Bearer " + apiKey);
    }

    @Override
    Usage usage(JsonNode response) {
      JsonNode usage = response.path("usage");
      return new Usage(count(usage, "prompt_tokens"), count(usage, "completion_tokens"));
    }
  },

  /** Anthropic Messages. */
  ANTHROPIC("anthropic", "/v1/messages", "https://api.anthropic.com") {
    @Override
    void authorize(HttpRequest.Builder upstream, String apiKey, String agentVersionHeader) {
      upstream.header("x-api-key", apiKey);
      upstream.header(
          VERSION_HEADER,
          agentVersionHeader != null && VERSION.matcher(agentVersionHeader).matches()
              ? agentVersionHeader
              : DEFAULT_VERSION);
    }

    @Override
    Usage usage(JsonNode response) {
      JsonNode usage = response.path("usage");
      // Prompt-cache reads and writes are input the provider bills too.
      return new Usage(
          count(usage, "input_tokens")
              + count(usage, "cache_creation_input_tokens")
              + count(usage, "cache_read_input_tokens"),
          count(usage, "output_tokens"));
    }
  };

  /**
   * The header the agent may set on an Anthropic call; the only agent header forwarded upstream.
   */
  public static final String VERSION_HEADER = "anthropic-version";

  /** Sent when the agent names no (valid) {@code anthropic-version}. */
  public static final String DEFAULT_VERSION = "2023-06-01";

  private static final Pattern VERSION = Pattern.compile("\\d{4}-\\d{2}-\\d{2}");

  private final String id;
  private final String path;
  private final String defaultBaseUrl;

  ModelProvider(String id, String path, String defaultBaseUrl) {
    this.id = id;
    this.path = path;
    this.defaultBaseUrl = defaultBaseUrl;
  }

  /**
   * {@code openai} or {@code anthropic}: the value of {@code SPB_MODEL_PROVIDER} and of the events.
   */
  public String id() {
    return id;
  }

  /** The one path the endpoint accepts (with POST) and forwards to. */
  public String path() {
    return path;
  }

  /** The provider's public API, used when {@code SPB_MODEL_URL} is not set. */
  public String defaultBaseUrl() {
    return defaultBaseUrl;
  }

  /** Parses {@code SPB_MODEL_PROVIDER}. */
  public static ModelProvider of(String id) {
    for (ModelProvider provider : values()) {
      if (provider.id.equals(id.trim().toLowerCase(Locale.ROOT))) {
        return provider;
      }
    }
    throw new IllegalArgumentException("SPB_MODEL_PROVIDER must be openai or anthropic, got " + id);
  }

  /**
   * Makes the agent's request body one the runner is willing to send: the job's model, no
   * streaming.
   */
  void prepare(ObjectNode body, String model) {
    body.put("model", model);
    body.put("stream", false);
  }

  /** Adds the runner's key (and, for Anthropic, the API version) to the upstream request. */
  abstract void authorize(HttpRequest.Builder upstream, String apiKey, String agentVersionHeader);

  /** The usage a (successful or not) response reports; zero for what it does not report. */
  abstract Usage usage(JsonNode response);

  private static long count(JsonNode usage, String field) {
    JsonNode value = usage.path(field);
    return value.canConvertToLong() ? Math.max(0, value.asLong()) : 0;
  }
}
