package ai.spboucher.spbgit.runner.model;

import io.vertx.core.MultiMap;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * What differs between the two providers the model endpoint speaks to: the APIs (paths) an agent
 * may call and how the runner's key is added upstream. What differs between the APIs themselves
 * (usage, streamed events) is {@link ModelApi}'s.
 */
public enum ModelProvider {

  /** OpenAI Chat Completions and Responses, and servers compatible with them. */
  OPENAI(
      "openai", List.of(ModelApi.CHAT_COMPLETIONS, ModelApi.RESPONSES), "https://api.openai.com") {
    @Override
    void authorize(MultiMap upstream, String apiKey, String agentVersionHeader) {
      upstream.set("Authorization", "Bearer " + apiKey);
    }
  },

  /** Anthropic Messages, and its token counting. */
  ANTHROPIC(
      "anthropic", List.of(ModelApi.MESSAGES, ModelApi.COUNT_TOKENS), "https://api.anthropic.com") {
    @Override
    void authorize(MultiMap upstream, String apiKey, String agentVersionHeader) {
      upstream.set("x-api-key", apiKey);
      upstream.set(
          VERSION_HEADER,
          agentVersionHeader != null && VERSION.matcher(agentVersionHeader).matches()
              ? agentVersionHeader
              : DEFAULT_VERSION);
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
  private final List<ModelApi> apis;
  private final String defaultBaseUrl;

  ModelProvider(String id, List<ModelApi> apis, String defaultBaseUrl) {
    this.id = id;
    this.apis = apis;
    this.defaultBaseUrl = defaultBaseUrl;
  }

  /**
   * {@code openai} or {@code anthropic}: the value of {@code SPB_MODEL_PROVIDER} and of the events.
   */
  public String id() {
    return id;
  }

  /** The provider's main path: {@code /v1/chat/completions} or {@code /v1/messages}. */
  public String path() {
    return apis.get(0).path();
  }

  /** The APIs the endpoint serves (with POST) and forwards for this provider. */
  public List<ModelApi> apis() {
    return apis;
  }

  /** The API at {@code path} (without query), if this provider has one there. */
  public Optional<ModelApi> api(String path) {
    return apis.stream().filter(api -> api.path().equals(path)).findFirst();
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

  /** Adds the runner's key (and, for Anthropic, the API version) to the upstream request. */
  abstract void authorize(MultiMap upstream, String apiKey, String agentVersionHeader);
}
