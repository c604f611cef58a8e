package ai.spboucher.spbgit.agent.fake;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * A scripted model provider on 127.0.0.1 (a random port) for tests: it answers each POST to its
 * endpoint with the next {@link Reply} of its script and records every request. When the script is
 * used up it answers 500. Subclasses speak the OpenAI or the Anthropic JSON shapes.
 *
 * <p>Depends only on the JDK and Jackson, so other modules (the runner's model proxy) can reuse it
 * as an upstream; the agent module publishes its test classes as a test-jar.
 *
 * <p>Thread-safe: the server thread answers while the test thread scripts and inspects.
 */
public abstract class FakeProvider implements AutoCloseable {
  protected static final ObjectMapper JSON = new ObjectMapper();

  /**
   * One scripted answer.
   *
   * @param delayMillis how long to wait before answering (to exercise timeouts)
   */
  public record Reply(int status, Map<String, String> headers, String body, long delayMillis) {
    public Reply after(long millis) {
      return new Reply(status, headers, body, millis);
    }

    public Reply withHeader(String name, String value) {
      Map<String, String> more = new LinkedHashMap<>(headers);
      more.put(name, value);
      return new Reply(status, more, body, delayMillis);
    }
  }

  /**
   * A request as received: lower-case header names, the body parsed as JSON (null if it was not).
   */
  public record RecordedRequest(
      String method, String path, Map<String, String> headers, String rawBody, JsonNode body) {
    public String header(String name) {
      return headers.get(name.toLowerCase(Locale.ROOT));
    }
  }

  private final HttpServer server;
  private final String endpoint;
  private final Deque<Reply> script = new ArrayDeque<>();
  private final List<RecordedRequest> requests = new ArrayList<>();

  protected FakeProvider(String endpoint) {
    this.endpoint = endpoint;
    try {
      server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    } catch (IOException e) {
      throw new IllegalStateException("cannot start the fake provider", e);
    }
    server.createContext("/", this::handle);
    server.start();
  }

  /** The base URL, as SPB_MODEL_URL would be: {@code http://127.0.0.1:PORT}. */
  public String url() {
    return "http://127.0.0.1:" + server.getAddress().getPort();
  }

  public int port() {
    return server.getAddress().getPort();
  }

  /** The path this provider answers, e.g. {@code /v1/chat/completions}. */
  public String endpoint() {
    return endpoint;
  }

  public synchronized FakeProvider script(Reply... replies) {
    script.addAll(List.of(replies));
    return this;
  }

  public synchronized List<RecordedRequest> requests() {
    return List.copyOf(requests);
  }

  public synchronized RecordedRequest lastRequest() {
    return requests.get(requests.size() - 1);
  }

  public synchronized int remaining() {
    return script.size();
  }

  // ---- replies every provider shares ----

  /** A 429 rate limit with a {@code retry-after} in seconds, in this provider's error shape. */
  public Reply rateLimited(int retryAfterSeconds) {
    return error(429, rateLimitType(), "Rate limit reached, please retry")
        .withHeader("retry-after", Integer.toString(retryAfterSeconds));
  }

  /** The runner proxy's answer once the job's budget is spent. */
  public static Reply budgetExceeded(String message) {
    ObjectNode body = JSON.createObjectNode();
    body.putObject("error").put("type", "budget_exceeded").put("message", message);
    return json(429, body);
  }

  /** An error in this provider's shape. */
  public abstract Reply error(int status, String type, String message);

  protected abstract String rateLimitType();

  public static Reply raw(int status, String contentType, String body) {
    return new Reply(status, Map.of("content-type", contentType), body, 0);
  }

  protected static Reply json(int status, JsonNode body) {
    return new Reply(status, Map.of("content-type", "application/json"), body.toString(), 0);
  }

  private void handle(HttpExchange exchange) throws IOException {
    try (exchange) {
      String raw = new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
      Map<String, String> headers = new LinkedHashMap<>();
      exchange
          .getRequestHeaders()
          .forEach(
              (name, values) ->
                  headers.put(name.toLowerCase(Locale.ROOT), String.join(",", values)));
      JsonNode body;
      try {
        body = JSON.readTree(raw);
      } catch (IOException e) {
        body = null;
      }
      Reply reply;
      synchronized (this) {
        requests.add(
            new RecordedRequest(
                exchange.getRequestMethod(),
                exchange.getRequestURI().getPath(),
                headers,
                raw,
                body));
        boolean ours =
            "POST".equals(exchange.getRequestMethod())
                && endpoint.equals(exchange.getRequestURI().getPath());
        reply =
            !ours
                ? error(
                    404,
                    "not_found_error",
                    "no such endpoint: " + exchange.getRequestURI().getPath())
                : script.isEmpty()
                    ? error(500, "api_error", "fake provider: script exhausted")
                    : script.poll();
      }
      if (reply.delayMillis() > 0) {
        try {
          Thread.sleep(reply.delayMillis());
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          return;
        }
      }
      reply.headers().forEach((name, value) -> exchange.getResponseHeaders().add(name, value));
      byte[] bytes = reply.body().getBytes(StandardCharsets.UTF_8);
      exchange.sendResponseHeaders(reply.status(), bytes.length == 0 ? -1 : bytes.length);
      try (OutputStream out = exchange.getResponseBody()) {
        out.write(bytes);
      } catch (IOException e) {
        // The client gave up (a timeout test): nothing to do.
      }
    }
  }

  @Override
  public void close() {
    server.stop(0);
  }
}
