package ai.spboucher.spbgit.runner.model;

import io.vertx.core.Future;
import io.vertx.core.MultiMap;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpClientRequest;
import io.vertx.core.http.HttpClientResponse;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpVersion;
import io.vertx.core.http.PoolOptions;
import io.vertx.core.http.RequestOptions;
import java.net.URI;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The runner's connection to its model provider, shared by all of its jobs: sends one prepared
 * request body with the runner's key to {@link ModelConfig#upstream(String)} on Vert.x's
 * non-blocking HTTP/1.1 client (keep-alive connections, TLS with the JVM's default trust for https
 * and host name verification), and hands back the response as it starts, for the caller to read as
 * it streams. It never retries and never follows redirects.
 *
 * <p>Timeouts: connecting may take {@link #CONNECT_TIMEOUT}; then the provider may stay silent for
 * at most {@link ModelConfig#timeout()}: until the response head, and then between two chunks of
 * the body. A silent provider fails the response (or its body) with a {@link
 * java.util.concurrent.TimeoutException}.
 *
 * <p>Threading: thread-safe. The client is made for the first {@link Vertx} that calls (the runner
 * has one) and lives as long as it does; {@link #send} never blocks, and its futures and the
 * response's handlers run on the caller's context (the endpoint's event loop).
 */
public final class ProviderClient {

  static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(10);

  /** Upstream connections kept across the runner's jobs; more calls queue for one. */
  static final int MAX_CONNECTIONS = 64;

  /** Response headers handed back to the agent; everything else the provider sends is dropped. */
  private static final List<String> PASSED_HEADERS =
      List.of("content-type", "retry-after", "retry-after-ms", "request-id", "x-request-id");

  private static final List<String> PASSED_PREFIXES =
      List.of("x-ratelimit-", "anthropic-ratelimit-");

  private final ModelConfig config;
  private Vertx vertx;
  private HttpClient http;

  public ProviderClient(ModelConfig config) {
    this.config = config;
  }

  public ModelConfig config() {
    return config;
  }

  /**
   * Opens a request to {@code api}'s path upstream with the runner's key; the caller sends the
   * prepared body on it with {@link #send}, and may {@link #abort} it at any time.
   *
   * @param agentHeaders the agent's request headers: the provider picks the few it forwards ({@link
   *     ModelProvider#authorize})
   */
  public Future<HttpClientRequest> open(Vertx caller, ModelApi api, MultiMap agentHeaders) {
    URI target = config.upstream(api.path());
    RequestOptions options =
        new RequestOptions()
            .setMethod(HttpMethod.POST)
            .setAbsoluteURI(target.toString())
            .setConnectTimeout(CONNECT_TIMEOUT.toMillis())
            .setIdleTimeout(config.timeout().toMillis())
            .setFollowRedirects(false);
    MultiMap headers = MultiMap.caseInsensitiveMultiMap();
    headers.set("Content-Type", "application/json");
    headers.set("Accept", "application/json, text/event-stream");
    config.provider().authorize(headers, config.apiKey(), agentHeaders);
    options.setHeaders(headers);
    return client(caller).request(options);
  }

  /**
   * Sends the body; the future is the response as soon as its head came, its body not yet read
   * (paused: the caller reads it at its own pace, for backpressure toward the agent).
   */
  static Future<HttpClientResponse> send(HttpClientRequest request, Buffer body) {
    return request
        .send(body)
        .map(
            response -> {
              response.pause();
              return response;
            });
  }

  /** Aborts a call whose answer is no longer wanted: the provider's connection is dropped. */
  static void abort(HttpClientRequest request) {
    request.reset();
  }

  /** The headers worth passing back to the agent, lower-cased. */
  static Map<String, String> passedHeaders(MultiMap headers) {
    Map<String, String> passed = new LinkedHashMap<>();
    headers.forEach(
        (name, value) -> {
          String lower = name.toLowerCase(Locale.ROOT);
          if (!passed.containsKey(lower)
              && (PASSED_HEADERS.contains(lower)
                  || PASSED_PREFIXES.stream().anyMatch(lower::startsWith))) {
            passed.put(lower, value);
          }
        });
    return passed;
  }

  private synchronized HttpClient client(Vertx caller) {
    if (http == null || vertx != caller) {
      vertx = caller;
      boolean tls = "https".equals(config.baseUrl().getScheme());
      HttpClientOptions options =
          new HttpClientOptions()
              .setProtocolVersion(HttpVersion.HTTP_1_1)
              .setKeepAlive(true)
              .setSsl(tls)
              .setVerifyHost(true)
              .setForceSni(tls)
              .setDecompressionSupported(false)
              .setConnectTimeout((int) CONNECT_TIMEOUT.toMillis());
      http = caller.createHttpClient(options, new PoolOptions().setHttp1MaxSize(MAX_CONNECTIONS));
    }
    return http;
  }
}
