package ai.spboucher.spbgit.runner.model;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A model provider on 127.0.0.1 speaking the public OpenAI Chat Completions ({@code POST /v1/chat/completions})
 * and Anthropic Messages ({@code POST /v1/messages}) shapes: it checks the key the way the real APIs do (401
 * with their error bodies), answers scripted replies in order (tool calls, text, errors, rate limits with
 * {@code retry-after}, delays), and records every request it received, headers and body, for the tests to
 * inspect. Without a script it answers a final text reply with a fixed usage.
 */
public final class FakeProvider implements AutoCloseable {

  static final ObjectMapper JSON = new ObjectMapper();

  /** A request as the provider received it. */
  public record Received(String method, String path, Map<String, List<String>> headers, byte[] body) {

    public String header(String name) {
      List<String> values = headers.get(name.toLowerCase(Locale.ROOT));
      return values == null || values.isEmpty() ? null : values.get(0);
    }

    public JsonNode json() {
      try {
        return JSON.readTree(body);
      } catch (IOException e) {
        throw new IllegalStateException(e);
      }
    }

    public String text() {
      return new String(body, StandardCharsets.UTF_8);
    }
  }

  /** Makes the answer to one request. */
  @FunctionalInterface
  public interface Responder {
    Reply apply(Received request);
  }

  /** One scripted answer. */
  public record Reply(int status, Map<String, String> headers, String body, long delayMs) {

    public Reply delayed(long ms) {
      return new Reply(status, headers, body, ms);
    }
  }

  private final HttpServer server;
  private final ExecutorService threads = Executors.newCachedThreadPool(r -> {
    Thread t = new Thread(r, "fake-provider");
    t.setDaemon(true);
    return t;
  });
  private final String key;
  private final List<Received> received = new CopyOnWriteArrayList<>();
  private final Deque<Responder> script = new ArrayDeque<>();
  private final AtomicInteger ids = new AtomicInteger();

  private FakeProvider(String key) throws IOException {
    this.key = key;
    this.server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 16);
    server.createContext("/", this::handle);
    server.setExecutor(threads);
    server.start();
  }

  /** A provider accepting only {@code key}. */
  public static FakeProvider start(String key) throws IOException {
    return new FakeProvider(key);
  }

  /**
   * The runner settings that make this fake the runner's OpenAI-compatible provider, with {@code model} as the
   * default model: the key in a file only its owner can read, in {@code dir}, as operators are told to keep it;
   * then {@code extra}, which may override any of them.
   */
  public Map<String, String> runnerEnv(Path dir, String model, Map<String, String> extra) throws IOException {
    Path keyFile = dir.resolve("model-key-" + port());
    Files.writeString(keyFile, key + "\n");
    Files.setPosixFilePermissions(keyFile, PosixFilePermissions.fromString("rw-------"));
    Map<String, String> env = new HashMap<>(Map.of("SPB_MODEL_PROVIDER", "openai", "SPB_MODEL_URL", baseUrl(),
        "SPB_MODEL_API_KEY_FILE", keyFile.toString(), "SPB_MODEL", model));
    env.putAll(extra);
    return env;
  }

  /** {@code http://127.0.0.1:<port>}: the base URL to configure. */
  public String baseUrl() {
    return "http://127.0.0.1:" + server.getAddress().getPort();
  }

  public int port() {
    return server.getAddress().getPort();
  }

  public List<Received> received() {
    return List.copyOf(received);
  }

  /** Answers the next requests with these replies, in order. */
  public synchronized FakeProvider then(Reply... replies) {
    for (Reply reply : replies) {
      script.addLast(request -> reply);
    }
    return this;
  }

  /** Answers the next requests with whatever these responders make of them, in order. */
  public synchronized FakeProvider then(Responder... responders) {
    script.addAll(List.of(responders));
    return this;
  }

  private synchronized Responder next() {
    return script.pollFirst();
  }

  private void handle(HttpExchange exchange) throws IOException {
    try (exchange) {
      Map<String, List<String>> headers = new LinkedHashMap<>();
      exchange.getRequestHeaders().forEach((name, values) -> headers.put(name.toLowerCase(Locale.ROOT),
          List.copyOf(values)));
      Received request = new Received(exchange.getRequestMethod(), exchange.getRequestURI().getPath(), headers,
          exchange.getRequestBody().readAllBytes());
      received.add(request);
      Reply reply = answer(request);
      if (reply.delayMs() > 0) {
        try {
          Thread.sleep(reply.delayMs());
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          return;
        }
      }
      byte[] body = reply.body().getBytes(StandardCharsets.UTF_8);
      exchange.getResponseHeaders().set("content-type", "application/json");
      exchange.getResponseHeaders().set("set-cookie", "__cf_bm=fake; path=/");
      reply.headers().forEach((name, value) -> exchange.getResponseHeaders().set(name, value));
      exchange.sendResponseHeaders(reply.status(), body.length == 0 ? -1 : body.length);
      exchange.getResponseBody().write(body);
    } catch (IOException e) {
      // The runner gave up on the call (a timeout test): nothing to answer.
    }
  }

  private Reply answer(Received request) {
    boolean anthropic = request.path().equals("/v1/messages");
    if (!request.method().equals("POST") || !(anthropic || request.path().equals("/v1/chat/completions"))) {
      return new Reply(404, Map.of(), "{\"error\":{\"message\":\"Invalid URL (" + request.method() + " "
          + request.path() + ")\",\"type\":\"invalid_request_error\",\"param\":null,\"code\":null}}", 0);
    }
    if (anthropic && !key.equals(request.header("x-api-key"))) {
      return anthropicError(401, "authentication_error", "invalid x-api-key");
    }
    if (!anthropic && !("Bearer " + key).equals(request.header("authorization"))) {
      return openAiError(401, "invalid_request_error", "invalid_api_key", "Incorrect API key provided: "
          + request.header("authorization") + ". You can find your API key at "
          + "https://platform.openai.com/account/api-keys.");
    }
    Responder scripted = next();
    if (scripted != null) {
      return scripted.apply(request);
    }
    return anthropic ? anthropicText("Done.", 10, 5).apply(request) : openAiText("Done.", 10, 5).apply(request);
  }

  // --- OpenAI Chat Completions -------------------------------------------------------------------------------

  /** A reply whose assistant message calls one function tool. */
  public Responder openAiToolCall(String name, String argumentsJson, long promptTokens,
                                                  long completionTokens) {
    return request -> {
      ObjectNode message = JSON.createObjectNode().put("role", "assistant").putNull("content").putNull("refusal");
      message.putArray("tool_calls").addObject().put("id", "call_" + ids.incrementAndGet()).put("type", "function")
          .putObject("function").put("name", name).put("arguments", argumentsJson);
      return openAiCompletion(request, message, "tool_calls", promptTokens, completionTokens);
    };
  }

  /** A final text reply. */
  public Responder openAiText(String content, long promptTokens, long completionTokens) {
    return request -> openAiCompletion(request, JSON.createObjectNode().put("role", "assistant")
        .put("content", content).putNull("refusal"), "stop", promptTokens, completionTokens);
  }

  private Reply openAiCompletion(Received request, ObjectNode message, String finishReason, long promptTokens,
                                 long completionTokens) {
    ObjectNode body = JSON.createObjectNode().put("id", "chatcmpl-" + ids.incrementAndGet())
        .put("object", "chat.completion").put("created", System.currentTimeMillis() / 1000)
        .put("model", request.json().path("model").asText());
    ArrayNode choices = body.putArray("choices");
    ObjectNode choice = choices.addObject().put("index", 0);
    choice.set("message", message);
    choice.putNull("logprobs");
    choice.put("finish_reason", finishReason);
    ObjectNode usage = body.putObject("usage").put("prompt_tokens", promptTokens)
        .put("completion_tokens", completionTokens).put("total_tokens", promptTokens + completionTokens);
    usage.putObject("prompt_tokens_details").put("cached_tokens", 0).put("audio_tokens", 0);
    usage.putObject("completion_tokens_details").put("reasoning_tokens", 0).put("audio_tokens", 0)
        .put("accepted_prediction_tokens", 0).put("rejected_prediction_tokens", 0);
    body.put("service_tier", "default").put("system_fingerprint", "fp_fake");
    return new Reply(200, Map.of("x-request-id", "req_" + ids.get()), body.toString(), 0);
  }

  /** An OpenAI error body: {@code {"error":{"message","type","param","code"}}}. */
  public static Reply openAiError(int status, String type, String code, String message) {
    ObjectNode body = JSON.createObjectNode();
    ObjectNode error = body.putObject("error").put("message", message).put("type", type).putNull("param");
    if (code == null) {
      error.putNull("code");
    } else {
      error.put("code", code);
    }
    return new Reply(status, Map.of(), body.toString(), 0);
  }

  /** OpenAI's 429 with its rate-limit headers. */
  public static Reply openAiRateLimited(int retryAfterSeconds) {
    Reply error = openAiError(429, "requests", "rate_limit_exceeded", "Rate limit reached for requests. "
        + "Please try again in " + retryAfterSeconds + "s.");
    return new Reply(429, Map.of("retry-after", String.valueOf(retryAfterSeconds),
        "x-ratelimit-limit-requests", "500", "x-ratelimit-remaining-requests", "0",
        "x-ratelimit-reset-requests", retryAfterSeconds + "s"), error.body(), 0);
  }

  // --- Anthropic Messages ------------------------------------------------------------------------------------

  /** A reply with a text block and one tool_use block. */
  public Responder anthropicToolUse(String name, String inputJson, long inputTokens,
                                                    long outputTokens) {
    return request -> {
      ArrayNode content = JSON.createArrayNode();
      content.addObject().put("type", "text").put("text", "Let me use " + name + ".");
      try {
        content.addObject().put("type", "tool_use").put("id", "toolu_" + ids.incrementAndGet()).put("name", name)
            .set("input", JSON.readTree(inputJson));
      } catch (IOException e) {
        throw new IllegalArgumentException(e);
      }
      return anthropicMessage(request, content, "tool_use", inputTokens, 0, outputTokens);
    };
  }

  /** A final text reply. */
  public Responder anthropicText(String text, long inputTokens, long outputTokens) {
    return request -> {
      ArrayNode content = JSON.createArrayNode();
      content.addObject().put("type", "text").put("text", text);
      return anthropicMessage(request, content, "end_turn", inputTokens, 0, outputTokens);
    };
  }

  /** A final text reply that also read {@code cacheReadTokens} from the prompt cache. */
  public Responder anthropicCachedText(String text, long inputTokens, long cacheReadTokens,
                                                       long outputTokens) {
    return request -> {
      ArrayNode content = JSON.createArrayNode();
      content.addObject().put("type", "text").put("text", text);
      return anthropicMessage(request, content, "end_turn", inputTokens, cacheReadTokens, outputTokens);
    };
  }

  private Reply anthropicMessage(Received request, ArrayNode content, String stopReason, long inputTokens,
                                 long cacheReadTokens, long outputTokens) {
    ObjectNode body = JSON.createObjectNode().put("id", "msg_" + ids.incrementAndGet()).put("type", "message")
        .put("role", "assistant").put("model", request.json().path("model").asText());
    body.set("content", content);
    body.put("stop_reason", stopReason).putNull("stop_sequence");
    body.putObject("usage").put("input_tokens", inputTokens).put("cache_creation_input_tokens", 0)
        .put("cache_read_input_tokens", cacheReadTokens).put("output_tokens", outputTokens);
    return new Reply(200, Map.of("request-id", "req_" + ids.get()), body.toString(), 0);
  }

  /** An Anthropic error body: {@code {"type":"error","error":{"type","message"}}}. */
  public static Reply anthropicError(int status, String type, String message) {
    ObjectNode body = JSON.createObjectNode().put("type", "error");
    body.putObject("error").put("type", type).put("message", message);
    return new Reply(status, Map.of("request-id", "req_err"), body.toString(), 0);
  }

  /** Anthropic's 429 with {@code retry-after}. */
  public static Reply anthropicRateLimited(int retryAfterSeconds) {
    Reply error = anthropicError(429, "rate_limit_error", "Number of request tokens has exceeded your per-minute "
        + "rate limit");
    return new Reply(429, Map.of("retry-after", String.valueOf(retryAfterSeconds),
        "anthropic-ratelimit-requests-remaining", "0", "request-id", "req_rl"), error.body(), 0);
  }

  @Override
  public void close() {
    server.stop(0);
    threads.shutdownNow();
  }
}
