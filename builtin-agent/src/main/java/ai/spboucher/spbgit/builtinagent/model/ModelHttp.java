package ai.spboucher.spbgit.builtinagent.model;

import ai.spboucher.spbgit.builtinagent.BreachSignal;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.ConnectException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpConnectTimeoutException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;

/**
 * JSON over HTTP to the runner's model proxy, with the error policy of the contract: a 429 rate
 * limit is retried (at most {@code maxRetries} times, waiting as {@code retry-after} says,
 * bounded); a 429 {@code budget_exceeded} ends the job; anything else is a {@link
 * ProviderException}. No API key is ever sent: the proxy adds it. The runner's endpoint keeps
 * connections alive, so the client's pooled connection is reused from call to call. Not
 * thread-safe: one request at a time, from the agent loop.
 */
public final class ModelHttp {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Duration POLL = Duration.ofMillis(200);

  private final URI base;
  private final Duration requestTimeout;
  private final BreachSignal breach;
  private final int maxRetries;
  private final Duration maxRetryWait;
  private final Consumer<String> log;
  private final HttpClient client;

  public ModelHttp(
      URI base,
      Duration requestTimeout,
      BreachSignal breach,
      int maxRetries,
      Duration maxRetryWait,
      Consumer<String> log) {
    this.base = base;
    this.requestTimeout = requestTimeout;
    this.breach = breach;
    this.maxRetries = maxRetries;
    this.maxRetryWait = maxRetryWait;
    this.log = log;
    // The container's HTTP_PROXY points at the egress relay; the model relay is reached directly.
    this.client =
        HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(10))
            .proxy(HttpClient.Builder.NO_PROXY)
            .build();
  }

  /** POSTs {@code body} to {@code base + path} and returns the parsed JSON answer of a 2xx. */
  public JsonNode post(String path, Map<String, String> headers, JsonNode body)
      throws ProviderException, BudgetExceededException, StopRequestedException {
    URI uri = URI.create(base + path);
    HttpRequest.Builder request =
        HttpRequest.newBuilder(uri)
            .timeout(requestTimeout)
            .header("content-type", "application/json")
            .header("accept", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(body.toString(), StandardCharsets.UTF_8));
    headers.forEach(request::header);
    HttpRequest built = request.build();
    for (int retry = 0; ; retry++) {
      checkBreach();
      HttpResponse<String> response = send(built);
      int status = response.statusCode();
      if (status / 100 == 2) {
        return parse(response);
      }
      String text = errorText(response.body());
      if (status == 429 && "budget_exceeded".equals(errorType(response.body()))) {
        throw new BudgetExceededException(text);
      }
      if (status == 429 && retry < maxRetries) {
        Duration wait = retryAfter(response, retry);
        log.accept(
            "model rate-limited (HTTP 429): waiting "
                + wait.toMillis() / 1000.0
                + " s before retry "
                + (retry + 1)
                + " of "
                + maxRetries);
        sleep(wait);
        continue;
      }
      String suffix =
          status == 429 ? " (rate limited; gave up after " + maxRetries + " retries)" : "";
      throw new ProviderException(
          "HTTP " + status + suffix + " from " + uri.getPath() + ": " + text);
    }
  }

  private HttpResponse<String> send(HttpRequest request)
      throws ProviderException, StopRequestedException {
    CompletableFuture<HttpResponse<String>> pending =
        client.sendAsync(request, HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
    while (true) {
      try {
        return pending.get(POLL.toMillis(), TimeUnit.MILLISECONDS);
      } catch (TimeoutException e) {
        Optional<String> reason = breach.reason();
        if (reason.isPresent()) {
          pending.cancel(true);
          throw new StopRequestedException(reason.get());
        }
      } catch (ExecutionException e) {
        throw describe(e.getCause());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new ProviderException("interrupted while waiting for the model");
      }
    }
  }

  private ProviderException describe(Throwable cause) {
    String where = "the model at " + base;
    if (cause instanceof HttpConnectTimeoutException) {
      return new ProviderException("could not connect to " + where + " within 10 s");
    }
    if (cause instanceof HttpTimeoutException) {
      return new ProviderException(
          "no answer from " + where + " within " + requestTimeout.toSeconds() + " s");
    }
    if (cause instanceof ConnectException) {
      return new ProviderException(
          "cannot connect to " + where + " (connection refused): is the model relay running?");
    }
    if (cause instanceof IOException) {
      return new ProviderException("request to " + where + " failed: " + cause);
    }
    return new ProviderException("request to " + where + " failed unexpectedly: " + cause);
  }

  private static JsonNode parse(HttpResponse<String> response) throws ProviderException {
    try {
      JsonNode json = JSON.readTree(response.body());
      if (json == null || !json.isObject()) {
        throw new ProviderException(
            "HTTP "
                + response.statusCode()
                + " with a body that is not a JSON object: "
                + clip(response.body()));
      }
      return json;
    } catch (JsonProcessingException e) {
      throw new ProviderException(
          "HTTP "
              + response.statusCode()
              + " with a body that is not JSON: "
              + clip(response.body()));
    }
  }

  private Duration retryAfter(HttpResponse<String> response, int retry) {
    Duration wait = Duration.ofSeconds(1L << Math.min(retry, 5));
    Optional<String> ms = response.headers().firstValue("retry-after-ms");
    Optional<String> header = response.headers().firstValue("retry-after");
    try {
      if (ms.isPresent()) {
        wait = Duration.ofMillis((long) Double.parseDouble(ms.get().trim()));
      } else if (header.isPresent()) {
        wait = Duration.ofMillis((long) (Double.parseDouble(header.get().trim()) * 1000));
      }
    } catch (NumberFormatException e) {
      try {
        ZonedDateTime at =
            ZonedDateTime.parse(header.orElseThrow().trim(), DateTimeFormatter.RFC_1123_DATE_TIME);
        wait = Duration.between(ZonedDateTime.now(at.getZone()), at);
      } catch (RuntimeException ignored) {
        // An unreadable header keeps the exponential default.
      }
    }
    if (wait.isNegative()) {
      return Duration.ZERO;
    }
    return wait.compareTo(maxRetryWait) > 0 ? maxRetryWait : wait;
  }

  private void sleep(Duration wait) throws StopRequestedException, ProviderException {
    long until = System.nanoTime() + wait.toNanos();
    while (true) {
      checkBreach();
      long left = until - System.nanoTime();
      if (left <= 0) {
        return;
      }
      try {
        Thread.sleep(Math.max(1, Math.min(TimeUnit.NANOSECONDS.toMillis(left), POLL.toMillis())));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new ProviderException("interrupted while waiting to retry");
      }
    }
  }

  private void checkBreach() throws StopRequestedException {
    Optional<String> reason = breach.reason();
    if (reason.isPresent()) {
      throw new StopRequestedException(reason.get());
    }
  }

  /** The provider's {@code error.type}, for OpenAI, Anthropic and the runner's proxy alike. */
  static String errorType(String body) {
    try {
      JsonNode error = JSON.readTree(body).path("error");
      return error.path("type").asText("");
    } catch (JsonProcessingException | RuntimeException e) {
      return "";
    }
  }

  /** The provider's error message ({@code error.message}), else the start of the body. */
  static String errorText(String body) {
    try {
      JsonNode json = JSON.readTree(body);
      JsonNode error = json.path("error");
      if (error.path("message").isTextual()) {
        String type = error.path("type").asText("");
        return clip((type.isEmpty() ? "" : type + ": ") + error.get("message").asText());
      }
      if (error.isTextual()) {
        return clip(error.asText());
      }
      if (json.path("message").isTextual()) {
        return clip(json.get("message").asText());
      }
    } catch (JsonProcessingException | RuntimeException e) {
      // Not JSON: the raw text below.
    }
    return body == null || body.isBlank() ? "(empty body)" : clip(body);
  }

  /** Cuts provider text to one printable line of at most 500 characters. */
  static String clip(String text) {
    String line = text.replaceAll("[\\p{Cc}\\p{Cf}\\s]+", " ").strip();
    return line.length() <= 500 ? line : line.substring(0, 500) + "…";
  }
}
