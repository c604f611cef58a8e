package ai.spboucher.spbgit.testsupport;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/**
 * A small blocking client for a gateway's HTTP API, for tests: JSON bodies in, the answer as it
 * came back out (status and body), nothing asserted. One client speaks as one bearer token (or
 * none); {@link #as} gives one that speaks as another and shares the connection pool.
 *
 * <p>Threading: any thread; calls block (a test thread, never an event loop).
 */
public final class RestClient {

  private final HttpClient http;
  private final String baseUrl;
  private final String token;

  /**
   * A client of the API at {@code baseUrl} ({@code http://127.0.0.1:port}) sending {@code token}.
   */
  public RestClient(String baseUrl, String token) {
    this(HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build(), baseUrl, token);
  }

  private RestClient(HttpClient http, String baseUrl, String token) {
    this.http = http;
    this.baseUrl = baseUrl;
    this.token = token;
  }

  /** The same API spoken to with {@code token} instead (null: no credential). */
  public RestClient as(String token) {
    return new RestClient(http, baseUrl, token);
  }

  public String baseUrl() {
    return baseUrl;
  }

  /**
   * Sends {@code method path} with {@code body} as JSON (null: no body); 30 s for the whole answer.
   */
  public HttpResponse<String> send(String method, String path, String body) throws Exception {
    HttpRequest.Builder request =
        HttpRequest.newBuilder(URI.create(baseUrl + path))
            .timeout(Duration.ofSeconds(30))
            .method(
                method,
                body == null
                    ? HttpRequest.BodyPublishers.noBody()
                    : HttpRequest.BodyPublishers.ofString(body, StandardCharsets.UTF_8));
    if (token != null) {
      request.header("Authorization", "Bearer " + token);
    }
    if (body != null) {
      request.header("Content-Type", "application/json");
    }
    return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
  }

  public HttpResponse<String> get(String path) throws Exception {
    return send("GET", path, null);
  }

  public HttpResponse<String> post(String path, String body) throws Exception {
    return send("POST", path, body);
  }

  public HttpResponse<String> delete(String path) throws Exception {
    return send("DELETE", path, null);
  }

  /** Sends a request built by the test (its own headers, a binary body), on the shared pool. */
  public HttpResponse<byte[]> raw(HttpRequest request) throws Exception {
    return http.send(request, HttpResponse.BodyHandlers.ofByteArray());
  }

  /**
   * Waits up to {@code timeout} for {@code GET /readyz} to answer 200 (the gateway has connected to
   * NATS); throws {@link AssertionError} if it does not.
   */
  public void awaitReady(Duration timeout) throws Exception {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (get("/readyz").statusCode() != 200) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("the gateway did not connect to NATS within " + timeout);
      }
      Thread.sleep(100);
    }
  }
}
