package ai.spboucher.spbgit.runner.model;

import java.io.IOException;
import java.net.http.HttpClient;
import java.net.http.HttpHeaders;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The runner's connection to its model provider, shared by all of its jobs: sends one prepared
 * request body with the runner's key to {@link ModelConfig#upstream()} and returns the answer as it
 * came (status, body and the few headers worth passing back). It never retries and never follows
 * redirects.
 *
 * <p>Threading: thread-safe; {@link #send} blocks the calling thread for at most the configured
 * timeout.
 */
public final class ProviderClient {

  /** Response headers handed back to the agent; everything else the provider sends is dropped. */
  private static final List<String> PASSED_HEADERS =
      List.of("content-type", "retry-after", "request-id", "x-request-id");

  private static final List<String> PASSED_PREFIXES =
      List.of("x-ratelimit-", "anthropic-ratelimit-");

  private final ModelConfig config;
  private final HttpClient http;

  public ProviderClient(ModelConfig config) {
    this.config = config;
    this.http =
        HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .followRedirects(HttpClient.Redirect.NEVER)
            .connectTimeout(Duration.ofSeconds(10))
            .build();
  }

  public ModelConfig config() {
    return config;
  }

  /** What the provider answered. */
  public record Answer(int status, Map<String, String> headers, byte[] body) {}

  /**
   * Sends {@code body} (already prepared: the job's model, no streaming) upstream with the runner's
   * key.
   *
   * @param anthropicVersion the agent's {@code anthropic-version} header, or null
   * @throws TimeoutException when no complete answer came within the configured timeout (the
   *     exchange is abandoned)
   * @throws IOException when the provider cannot be reached or the connection broke
   */
  public Answer send(byte[] body, String anthropicVersion)
      throws IOException, InterruptedException, TimeoutException {
    HttpRequest.Builder request =
        HttpRequest.newBuilder(config.upstream())
            .timeout(config.timeout())
            .header("Content-Type", "application/json")
            .header("Accept", "application/json")
            .POST(HttpRequest.BodyPublishers.ofByteArray(body));
    config.provider().authorize(request, config.apiKey(), anthropicVersion);
    CompletableFuture<HttpResponse<byte[]>> exchange =
        http.sendAsync(request.build(), HttpResponse.BodyHandlers.ofByteArray());
    try {
      // The request timeout covers only the wait for the response head; this covers the body too.
      HttpResponse<byte[]> response =
          exchange.get(config.timeout().toMillis(), TimeUnit.MILLISECONDS);
      return new Answer(response.statusCode(), passedHeaders(response.headers()), response.body());
    } catch (TimeoutException | InterruptedException e) {
      exchange.cancel(true);
      throw e;
    } catch (ExecutionException e) {
      if (e.getCause() instanceof HttpTimeoutException timeout) {
        throw new TimeoutException(timeout.getMessage());
      }
      if (e.getCause() instanceof IOException io) {
        throw io;
      }
      throw new IOException(String.valueOf(e.getCause()), e.getCause());
    }
  }

  private static Map<String, String> passedHeaders(HttpHeaders headers) {
    Map<String, String> passed = new LinkedHashMap<>();
    headers
        .map()
        .forEach(
            (name, values) -> {
              String lower = name.toLowerCase(Locale.ROOT);
              if (!values.isEmpty()
                  && (PASSED_HEADERS.contains(lower)
                      || PASSED_PREFIXES.stream().anyMatch(lower::startsWith))) {
                passed.put(lower, values.get(0));
              }
            });
    return passed;
  }
}
