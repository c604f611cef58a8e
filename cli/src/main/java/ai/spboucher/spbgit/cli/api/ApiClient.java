package ai.spboucher.spbgit.cli.api;

import ai.spboucher.spbgit.cli.CliException;
import ai.spboucher.spbgit.cli.ExitCode;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.ConnectException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpConnectTimeoutException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.net.http.WebSocket;
import java.nio.channels.UnresolvedAddressException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;

/**
 * The gateway's REST API ({@code /api/v1}) over {@code java.net.http}, with the owner's token as
 * {@code Authorization: Bearer}. Every failure becomes a {@link CliException}: an error status an
 * {@link ApiException} carrying the gateway's {@code {"error"}} message, an unreachable gateway
 * {@link ExitCode#UNAVAILABLE}. Calls block; the client is safe to share between threads.
 */
public final class ApiClient {

  public static final ObjectMapper JSON = new ObjectMapper();
  private static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(10);
  private static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(60);

  private final String baseUrl;
  private final String token;
  private final HttpClient http;
  private final HttpClient webSockets;

  /** {@code baseUrl} without a trailing slash; {@code token} may be null (anonymous). */
  public ApiClient(String baseUrl, String token) {
    this.baseUrl = baseUrl;
    this.token = token;
    // The gateway speaks HTTP/1.1 only (no h2c), so no request offers an upgrade it would refuse.
    this.http =
        HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(CONNECT_TIMEOUT)
            .followRedirects(HttpClient.Redirect.NEVER)
            .build();
    // A log websocket gets a connection of its own rather than one the API requests left in the
    // pool.
    this.webSockets =
        HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(CONNECT_TIMEOUT)
            .build();
  }

  public String baseUrl() {
    return baseUrl;
  }

  /** The owner's review page of a job. */
  public String jobPageUrl(String repo, String id) {
    return baseUrl + "/repos/" + segment(repo) + "/agent-jobs/" + segment(id);
  }

  /** The page comparing a best-of-N group's attempts. */
  public String groupPageUrl(String repo, String group) {
    return baseUrl + "/repos/" + segment(repo) + "/agent-groups/" + segment(group);
  }

  /** The API path of a job, e.g. {@code /api/v1/repos/demo/agent-jobs/<id>}. */
  public static String jobPath(String repo, String id) {
    return "/api/v1/repos/" + segment(repo) + "/agent-jobs/" + segment(id);
  }

  public JsonNode get(String path) {
    return json(send(request(path).GET()));
  }

  /**
   * POSTs {@code body} (any Jackson-serialisable value, or null for none) and returns the JSON
   * answer.
   */
  public JsonNode post(String path, Object body) {
    HttpRequest.Builder request = request(path);
    if (body == null) {
      request.POST(HttpRequest.BodyPublishers.noBody());
    } else {
      request
          .header("Content-Type", "application/json")
          .POST(HttpRequest.BodyPublishers.ofString(encode(body)));
    }
    return json(send(request));
  }

  /** DELETEs and returns the JSON answer, or null for 204 No Content. */
  public JsonNode delete(String path) {
    return json(send(request(path).DELETE()));
  }

  /** GETs a text resource (a job's log). */
  public String getText(String path) {
    return send(request(path).GET());
  }

  /**
   * Opens a websocket on an API path; handshake failures are left to the caller ({@link
   * #failureOf}).
   */
  public CompletableFuture<WebSocket> openWebSocket(
      String pathAndQuery, WebSocket.Listener listener) {
    WebSocket.Builder builder = webSockets.newWebSocketBuilder().connectTimeout(CONNECT_TIMEOUT);
    if (token != null) {
      builder.header("Authorization", "Bearer " + token);
    }
    return builder.buildAsync(URI.create(webSocketBase() + pathAndQuery), listener);
  }

  /** The {@link CliException} for an error status and body from the gateway. */
  public static CliException failureOf(int status, String body) {
    String message = errorMessage(body);
    if (message == null) {
      message = "the gateway answered HTTP " + status;
    }
    if (status == 401) {
      message += " (check SPB_TOKEN or run 'spbgit login')";
    } else if (status >= 500) {
      message = "gateway error (HTTP " + status + "): " + message;
    }
    return new ApiException(status, message);
  }

  /** The {@link CliException} for an I/O failure talking to the gateway. */
  public CliException failureOf(IOException e) {
    String why;
    if (e instanceof ConnectException || e.getCause() instanceof ConnectException) {
      why = "connection refused";
    } else if (e instanceof HttpConnectTimeoutException) {
      why = "connection timed out";
    } else if (e instanceof HttpTimeoutException) {
      why = "no answer within " + REQUEST_TIMEOUT.toSeconds() + " s";
    } else if (e.getCause() instanceof UnresolvedAddressException) {
      why = "unknown host";
    } else {
      why = e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
    }
    return new CliException(
        ExitCode.UNAVAILABLE, "cannot reach the gateway at " + baseUrl + ": " + why, e);
  }

  /**
   * A path segment, percent-encoded (repository names and ids are plain, but arguments are user
   * input).
   */
  public static String segment(String value) {
    return URLEncoder.encode(value, StandardCharsets.UTF_8).replace("+", "%20");
  }

  /** A query parameter value, percent-encoded. */
  public static String query(String value) {
    return URLEncoder.encode(value, StandardCharsets.UTF_8);
  }

  private HttpRequest.Builder request(String path) {
    HttpRequest.Builder builder =
        HttpRequest.newBuilder(URI.create(baseUrl + path))
            .timeout(REQUEST_TIMEOUT)
            .header("Accept", "application/json");
    if (token != null) {
      builder.header("Authorization", "Bearer " + token);
    }
    return builder;
  }

  private String send(HttpRequest.Builder request) {
    HttpResponse<String> response;
    try {
      response =
          http.send(request.build(), HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
    } catch (IOException e) {
      throw failureOf(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new CliException(ExitCode.UNAVAILABLE, "interrupted while waiting for the gateway", e);
    }
    if (response.statusCode() >= 400 || response.statusCode() < 200) {
      throw failureOf(response.statusCode(), response.body());
    }
    return response.body();
  }

  private static JsonNode json(String body) {
    if (body == null || body.isEmpty()) {
      return null;
    }
    try {
      return JSON.readTree(body);
    } catch (JsonProcessingException e) {
      throw new CliException(
          ExitCode.UNAVAILABLE, "the gateway answered something that is not JSON");
    }
  }

  private static String errorMessage(String body) {
    if (body == null || body.isBlank()) {
      return null;
    }
    try {
      JsonNode node = JSON.readTree(body);
      return node != null && node.path("error").isTextual() ? node.path("error").asText() : null;
    } catch (JsonProcessingException e) {
      return null;
    }
  }

  private static String encode(Object body) {
    try {
      return JSON.writeValueAsString(body);
    } catch (JsonProcessingException e) {
      throw new IllegalArgumentException("cannot encode request body", e);
    }
  }

  private String webSocketBase() {
    return baseUrl.startsWith("https:")
        ? "wss:" + baseUrl.substring("https:".length())
        : "ws:" + baseUrl.substring("http:".length());
  }
}
