package ai.spboucher.spbgit.runner.model;

import ai.spboucher.spbgit.common.Settings;
import java.io.IOException;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * The runner's model provider, for llm jobs: which API, where, with which key, which models a job
 * may use, and each job's token budget. The key is held here and in the upstream requests only:
 * {@link #toString()} leaves it out, and nothing puts it in a log, an event or a container.
 *
 * @param provider the provider's API
 * @param baseUrl the provider's base URL (https, or http for local servers), without a trailing
 *     slash
 * @param apiKey the runner's key for the provider
 * @param defaultModel the model of jobs that name none
 * @param allowedModels the models a job may name (the default model among them)
 * @param tokenBudget input plus output tokens one job may spend
 * @param timeout how long the provider may stay silent during one call: until the first byte of its
 *     answer, and then between two chunks of it (a streamed answer may take longer in all)
 * @param concurrency how many calls one job may have in flight at once ({@code
 *     SPB_MODEL_CONCURRENCY})
 */
public record ModelConfig(
    ModelProvider provider,
    URI baseUrl,
    String apiKey,
    String defaultModel,
    List<String> allowedModels,
    long tokenBudget,
    Duration timeout,
    int concurrency) {

  /** The variables {@link #fromEnvironment} reads. */
  public static final List<String> VARIABLES =
      List.of(
          "SPB_MODEL_PROVIDER",
          "SPB_MODEL_URL",
          "SPB_MODEL_API_KEY",
          "SPB_MODEL_API_KEY_FILE",
          "SPB_MODEL",
          "SPB_MODELS",
          "SPB_MODEL_TOKEN_BUDGET",
          "SPB_MODEL_TIMEOUT",
          "SPB_MODEL_CONCURRENCY");

  /** Default {@code SPB_MODEL_TOKEN_BUDGET}. */
  public static final long DEFAULT_TOKEN_BUDGET = 200_000;

  /** Default {@code SPB_MODEL_TIMEOUT}. */
  public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(120);

  /** Default {@code SPB_MODEL_CONCURRENCY}. */
  public static final int DEFAULT_CONCURRENCY = 4;

  /** The most {@code SPB_MODEL_CONCURRENCY} may be: below the endpoint's connection limit. */
  public static final int MAX_CONCURRENCY = 8;

  private static final Pattern MODEL = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._:/@+-]{0,127}");
  private static final Pattern KEY = Pattern.compile("[\\x21-\\x7e]+");

  public ModelConfig {
    String scheme = baseUrl.getScheme();
    if (!("https".equals(scheme) || "http".equals(scheme))
        || baseUrl.getHost() == null
        || baseUrl.getRawUserInfo() != null
        || baseUrl.getRawQuery() != null
        || baseUrl.getRawFragment() != null) {
      throw new IllegalArgumentException(
          "SPB_MODEL_URL must be an https:// (or http://) URL with a host and no "
              + "user info, query or fragment");
    }
    if (apiKey == null || !KEY.matcher(apiKey).matches()) {
      throw new IllegalArgumentException(
          "the model API key (SPB_MODEL_API_KEY or SPB_MODEL_API_KEY_FILE) must be "
              + "non-empty printable ASCII without spaces (for a local server that needs no key, any placeholder)");
    }
    allowedModels = List.copyOf(allowedModels);
    for (String model : allowedModels) {
      if (!MODEL.matcher(model).matches()) {
        throw new IllegalArgumentException("invalid model name in SPB_MODEL/SPB_MODELS: " + model);
      }
    }
    if (!allowedModels.contains(defaultModel)) {
      throw new IllegalArgumentException(
          "SPB_MODELS must include SPB_MODEL (" + defaultModel + ")");
    }
    if (tokenBudget < 1) {
      throw new IllegalArgumentException("SPB_MODEL_TOKEN_BUDGET must be at least 1");
    }
    Settings.positive("SPB_MODEL_TIMEOUT", timeout);
    Settings.inRange("SPB_MODEL_CONCURRENCY", concurrency, 1, MAX_CONCURRENCY);
  }

  /** A configuration with the default {@code SPB_MODEL_CONCURRENCY}. */
  public ModelConfig(
      ModelProvider provider,
      URI baseUrl,
      String apiKey,
      String defaultModel,
      List<String> allowedModels,
      long tokenBudget,
      Duration timeout) {
    this(
        provider,
        baseUrl,
        apiKey,
        defaultModel,
        allowedModels,
        tokenBudget,
        timeout,
        DEFAULT_CONCURRENCY);
  }

  /**
   * Reads {@code SPB_MODEL_*}; null when {@code SPB_MODEL_PROVIDER} is not set (the runner then
   * refuses llm jobs). The key comes from {@code SPB_MODEL_API_KEY_FILE} (trailing newline
   * stripped) when set, else from {@code SPB_MODEL_API_KEY}. Fails fast on anything incomplete or
   * malformed.
   */
  public static ModelConfig fromEnvironment(Map<String, String> env) {
    Settings s = Settings.keepingEmpty(env);
    Optional<String> providerName = s.nonBlank("SPB_MODEL_PROVIDER");
    if (providerName.isEmpty()) {
      for (String name :
          List.of(
              "SPB_MODEL_URL",
              "SPB_MODEL_API_KEY",
              "SPB_MODEL_API_KEY_FILE",
              "SPB_MODEL",
              "SPB_MODELS",
              "SPB_MODEL_CONCURRENCY")) {
        if (s.nonBlank(name).isPresent()) {
          throw new IllegalArgumentException(name + " is set but SPB_MODEL_PROVIDER is not");
        }
      }
      return null;
    }
    ModelProvider provider = ModelProvider.of(providerName.get());
    String model =
        s.nonBlank("SPB_MODEL")
            .orElseThrow(
                () ->
                    new IllegalArgumentException("SPB_MODEL is required with SPB_MODEL_PROVIDER"));
    List<String> models = s.list("SPB_MODELS");
    return new ModelConfig(
        provider,
        s.parsed("SPB_MODEL_URL", baseUrl(provider.defaultBaseUrl()), ModelConfig::baseUrl),
        apiKey(s),
        model,
        models.isEmpty() ? List.of(model) : models,
        s.wholeNumber("SPB_MODEL_TOKEN_BUDGET", DEFAULT_TOKEN_BUDGET),
        s.duration("SPB_MODEL_TIMEOUT", DEFAULT_TIMEOUT),
        s.integer("SPB_MODEL_CONCURRENCY", DEFAULT_CONCURRENCY));
  }

  /** The model a job runs with: the one it asked for, or the default; refused when not allowed. */
  public String jobModel(String asked) {
    if (asked == null || asked.isEmpty()) {
      return defaultModel;
    }
    if (!allowedModels.contains(asked)) {
      throw new IllegalArgumentException(
          "model "
              + asked
              + " is not offered by this runner (allowed: "
              + String.join(", ", allowedModels)
              + ")");
    }
    return asked;
  }

  /**
   * Where calls to {@code path} (one of the provider's {@link ModelApi#path()}s) are forwarded: the
   * base URL plus the path (a base already ending in /v1 is fine).
   */
  public URI upstream(String path) {
    String base = baseUrl.toString();
    return URI.create(base.endsWith("/v1") ? base + path.substring("/v1".length()) : base + path);
  }

  /** The provider's port, as the egress events report it. */
  public int upstreamPort() {
    return baseUrl.getPort() > 0
        ? baseUrl.getPort()
        : ("https".equals(baseUrl.getScheme()) ? 443 : 80);
  }

  @Override
  public String toString() {
    return "ModelConfig[provider="
        + provider.id()
        + ", baseUrl="
        + baseUrl
        + ", apiKey=(hidden), defaultModel="
        + defaultModel
        + ", allowedModels="
        + allowedModels
        + ", tokenBudget="
        + tokenBudget
        + ", timeout="
        + timeout
        + ", concurrency="
        + concurrency
        + "]";
  }

  private static URI baseUrl(String value) {
    String trimmed = value.strip();
    while (trimmed.endsWith("/")) {
      trimmed = trimmed.substring(0, trimmed.length() - 1);
    }
    try {
      return new URI(trimmed);
    } catch (URISyntaxException e) {
      throw new IllegalArgumentException("SPB_MODEL_URL is not a URL: " + e.getMessage(), e);
    }
  }

  private static String apiKey(Settings s) {
    String file = s.nonBlank("SPB_MODEL_API_KEY_FILE").orElse(null);
    if (file == null) {
      return s.nonBlank("SPB_MODEL_API_KEY").orElse(null);
    }
    try {
      String key = Files.readString(Path.of(file), StandardCharsets.UTF_8);
      while (key.endsWith("\n") || key.endsWith("\r")) {
        key = key.substring(0, key.length() - 1);
      }
      return key;
    } catch (IOException e) {
      // The path only, never the content.
      throw new IllegalArgumentException(
          "cannot read SPB_MODEL_API_KEY_FILE " + file + ": " + e.getClass().getSimpleName(), e);
    }
  }
}
