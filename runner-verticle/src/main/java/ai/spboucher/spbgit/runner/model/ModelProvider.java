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
    void authorize(MultiMap upstream, String apiKey, MultiMap agent) {
      upstream.set("Authorization", "Bearer " + apiKey);
    }
  },

  /** Anthropic Messages, and its token counting. */
  ANTHROPIC(
      "anthropic", List.of(ModelApi.MESSAGES, ModelApi.COUNT_TOKENS), "https://api.anthropic.com") {
    @Override
    void authorize(MultiMap upstream, String apiKey, MultiMap agent) {
      upstream.set("x-api-key", apiKey);
      String version = agent.get(VERSION_HEADER);
      upstream.set(
          VERSION_HEADER,
          version != null && VERSION.matcher(version).matches() ? version : DEFAULT_VERSION);
      // Claude Code names the API features its requests use (context management, interleaved
      // thinking, ...): without them the provider refuses the very fields it sends. A name alone
      // brings no provider-side feature in: those are in the body, which must be on the positive
      // list (MessagesRequests).
      String beta = agent.get(BETA_HEADER);
      if (beta != null && beta.length() <= MAX_BETA_LENGTH && BETA.matcher(beta).matches()) {
        upstream.set(BETA_HEADER, beta);
      }
    }
  };

  /**
   * A header the agent may set on an Anthropic call: with {@link #BETA_HEADER}, the only agent
   * headers forwarded upstream.
   */
  public static final String VERSION_HEADER = "anthropic-version";

  /** The Anthropic API features a call opts into, as comma-separated names. */
  public static final String BETA_HEADER = "anthropic-beta";

  /** Feature names only (lower-case words with digits, dots and dashes): nothing else passes. */
  private static final Pattern BETA =
      Pattern.compile("[a-z0-9][a-z0-9._-]{0,99}(\\s*,\\s*[a-z0-9][a-z0-9._-]{0,99}){0,31}");

  private static final int MAX_BETA_LENGTH = 2048;

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

  /**
   * Adds the runner's key to the upstream request, and for Anthropic the API version and beta
   * features the agent's request named ({@code agent}: its headers), when well formed.
   */
  abstract void authorize(MultiMap upstream, String apiKey, MultiMap agent);
}
