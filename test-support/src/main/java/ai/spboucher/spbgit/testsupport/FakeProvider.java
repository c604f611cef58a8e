package ai.spboucher.spbgit.testsupport;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
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
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;

/**
 * A model provider on 127.0.0.1 speaking the public OpenAI Chat Completions ({@code POST
 * /v1/chat/completions}), OpenAI Responses ({@code POST /v1/responses}) and Anthropic Messages
 * ({@code POST /v1/messages}, and {@code /v1/messages/count_tokens}) shapes: it checks the key the
 * way the real APIs do (401 with their error bodies), answers scripted replies in order (text, one
 * or several tool calls, replies cut off at the token limit, errors in each API's shape, rate
 * limits with {@code retry-after}, raw bodies, delays), and records every request it received,
 * headers and body, for the tests to inspect. Without a script it answers a final text reply with a
 * fixed usage. Started {@link #startWithoutKey() without a key} it stands for the runner's model
 * endpoint as the agent inside the sandbox sees it, which adds the key itself.
 *
 * <p>A request with {@code "stream": true} gets the same scripted turn as server-sent events, the
 * way each API streams it (chunked, one flush per event): Chat Completions {@code data:} chunks
 * with {@code tool_calls} deltas and, when {@code stream_options.include_usage} is set, a final
 * usage chunk; Responses {@code response.*} events ending in {@code response.completed} with the
 * usage; Anthropic's {@code message_start} (input usage) to {@code message_delta} (output usage)
 * and {@code message_stop}. A streamed reply can be {@link Reply#slowed slowed} or {@link
 * Reply#droppedAfter dropped} midway.
 *
 * <p>Threading: requests are served concurrently on a cached pool (coding-agent CLIs call in
 * parallel); the script is taken in arrival order under the fake's lock, and {@link #received()}
 * and {@link #reportedUsage()} may be read from any thread.
 */
public final class FakeProvider implements AutoCloseable {

  public static final ObjectMapper JSON = new ObjectMapper();

  /** A request as the provider received it; {@code query} is the raw query string, or null. */
  public record Received(
      String method, String path, String query, Map<String, List<String>> headers, byte[] body) {

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

    /** Whether the caller asked for server-sent events. */
    public boolean streamed() {
      try {
        return body.length > 0 && JSON.readTree(body).path("stream").asBoolean(false);
      } catch (IOException e) {
        return false;
      }
    }
  }

  /** Makes the answer to one request. */
  @FunctionalInterface
  public interface Responder {
    Reply apply(Received request);

    /** The same answer, sent {@code ms} later (to exercise the caller's timeout). */
    default Responder delayed(long ms) {
      return request -> apply(request).delayed(ms);
    }
  }

  /** Tokens a reply reported: what the provider would bill. */
  public record Usage(long inputTokens, long cacheReadTokens, long outputTokens) {

    public static final Usage NONE = new Usage(0, 0, 0);

    /** The usage of the turns scripted without token counts. */
    public static final Usage TURN = new Usage(120, 0, 30);

    Usage plus(Usage other) {
      return new Usage(
          inputTokens + other.inputTokens,
          cacheReadTokens + other.cacheReadTokens,
          outputTokens + other.outputTokens);
    }
  }

  /**
   * One scripted answer: a JSON {@code body}, or, when {@code events} is not null, these
   * server-sent events (each a complete {@code event:}/{@code data:} frame), {@code eventGapMs}
   * apart; with {@code dropAfterEvents >= 0} the connection is cut after that many events, without
   * the last chunk (a JSON reply is cut before anything is sent). {@code usage} is what the reply
   * reports, counted in {@link #reportedUsage()} once it was delivered in full.
   */
  public record Reply(
      int status,
      Map<String, String> headers,
      String body,
      long delayMs,
      List<String> events,
      long eventGapMs,
      int dropAfterEvents,
      Usage usage)
      implements Responder {

    public Reply(int status, Map<String, String> headers, String body, long delayMs) {
      this(status, headers, body, delayMs, null, 0, -1, Usage.NONE);
    }

    public static Reply streamed(Map<String, String> headers, List<String> events, Usage usage) {
      return new Reply(200, headers, "", 0, List.copyOf(events), 0, -1, usage);
    }

    public Reply delayed(long ms) {
      return new Reply(status, headers, body, ms, events, eventGapMs, dropAfterEvents, usage);
    }

    /** Pauses {@code gapMs} after every event (a slow provider). */
    public Reply slowed(long gapMs) {
      return new Reply(status, headers, body, delayMs, events, gapMs, dropAfterEvents, usage);
    }

    /**
     * Cuts the connection after {@code count} events (a provider that drops the stream); a JSON
     * reply is cut before its status line, whatever the count.
     */
    public Reply droppedAfter(int count) {
      return new Reply(status, headers, body, delayMs, events, eventGapMs, count, usage);
    }

    public boolean isStream() {
      return events != null;
    }

    /** A scripted reply is the same whatever the request. */
    @Override
    public Reply apply(Received request) {
      return this;
    }
  }

  /** The APIs this fake speaks, by request path. */
  public enum Api {
    OPENAI_CHAT,
    OPENAI_RESPONSES,
    ANTHROPIC_MESSAGES
  }

  /**
   * One tool call of a turn: the tool's name and its arguments as the model wrote them, JSON text
   * that may be invalid (Anthropic's {@code input} must be valid: it is an object there).
   */
  public record Call(String name, String arguments) {}

  private final HttpServer server;
  private final ExecutorService threads =
      Executors.newCachedThreadPool(
          r -> {
            Thread t = new Thread(r, "fake-provider");
            t.setDaemon(true);
            return t;
          });
  private final String key;
  private final List<Received> received = new CopyOnWriteArrayList<>();
  private final Deque<Responder> script = new ArrayDeque<>();
  private final AtomicInteger ids = new AtomicInteger();
  private final Map<Api, WireFormat> formats =
      Map.of(
          Api.OPENAI_CHAT, new ChatCompletionsFormat(ids),
          Api.OPENAI_RESPONSES, new ResponsesFormat(ids),
          Api.ANTHROPIC_MESSAGES, new MessagesFormat(ids));
  private Predicate<Received> scripted = request -> true;
  private volatile int holdAfter = -1;
  private volatile CountDownLatch release;
  private Usage reported = Usage.NONE;

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
   * A provider that asks for no key, as the runner's model endpoint does: the agent in the sandbox
   * sends none, the runner adds it on the way out.
   */
  public static FakeProvider startWithoutKey() throws IOException {
    return new FakeProvider(null);
  }

  /**
   * The runner settings that make this fake (started with a key) the runner's OpenAI-compatible
   * provider, with {@code model} as the default model: the key in a file only its owner can read,
   * in {@code dir}, as operators are told to keep it; then {@code extra}, which may override any of
   * them.
   */
  public Map<String, String> runnerEnv(Path dir, String model, Map<String, String> extra)
      throws IOException {
    Path keyFile = dir.resolve("model-key-" + port());
    Files.writeString(keyFile, key + "\n");
    Files.setPosixFilePermissions(keyFile, PosixFilePermissions.fromString("rw-------"));
    Map<String, String> env =
        new HashMap<>(
            Map.of(
                "SPB_MODEL_PROVIDER",
                "openai",
                "SPB_MODEL_URL",
                baseUrl(),
                "SPB_MODEL_API_KEY_FILE",
                keyFile.toString(),
                "SPB_MODEL",
                model));
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

  public Received lastReceived() {
    return received.get(received.size() - 1);
  }

  /** The sum of the usage of every reply delivered in full (a dropped stream reports nothing). */
  public synchronized Usage reportedUsage() {
    return reported;
  }

  /**
   * Answers the next requests with whatever these responders (or fixed {@link Reply replies}) make
   * of them, in order.
   */
  public synchronized FakeProvider then(Responder... responders) {
    script.addAll(List.of(responders));
    return this;
  }

  /**
   * Takes the script only for requests matching {@code filter}; the others get the default text
   * reply. A CLI's side calls (a session title, a memory summary) then cannot consume the turns
   * meant for its agent loop.
   */
  public synchronized FakeProvider scriptOnly(Predicate<Received> filter) {
    this.scripted = filter;
    return this;
  }

  /**
   * Holds every stream after its first {@code events} events until {@code release} opens (at most
   * 30 s): a test can then see what reached the client while the provider is still answering.
   */
  public FakeProvider holdStreamsAfter(int events, CountDownLatch release) {
    this.release = release;
    this.holdAfter = events;
    return this;
  }

  private synchronized Responder next(Received request) {
    return scripted.test(request) ? script.pollFirst() : null;
  }

  private synchronized void count(Usage usage) {
    reported = reported.plus(usage);
  }

  private void handle(HttpExchange exchange) throws IOException {
    Reply reply;
    try {
      Received request = ProviderExchange.read(exchange);
      received.add(request);
      reply = answer(request);
      ProviderExchange.write(exchange, reply, this::afterEvent);
    } catch (IOException e) {
      // The client gave up on the call (a timeout test): nothing to answer.
      exchange.close();
      return;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      exchange.close();
      return;
    }
    // Counted before the close ends the body, so a caller that has read the reply sees its usage.
    count(reply.usage());
    exchange.close();
  }

  /** Holds a stream after its {@code events}-th event when {@link #holdStreamsAfter} asked to. */
  private void afterEvent(int events) throws InterruptedException {
    if (events == holdAfter && release != null) {
      release.await(30, TimeUnit.SECONDS);
    }
  }

  /** The API a request path belongs to, or null. */
  public static Api apiOf(Received request) {
    return switch (request.path()) {
      case "/v1/chat/completions" -> Api.OPENAI_CHAT;
      case "/v1/responses" -> Api.OPENAI_RESPONSES;
      case "/v1/messages", "/v1/messages/count_tokens" -> Api.ANTHROPIC_MESSAGES;
      default -> null;
    };
  }

  private Reply answer(Received request) {
    Api api = apiOf(request);
    if (!request.method().equals("POST") || api == null) {
      return new Reply(
          404,
          Map.of(),
          "{\"error\":{\"message\":\"Invalid URL ("
              + request.method()
              + " "
              + request.path()
              + ")\",\"type\":\"invalid_request_error\",\"param\":null,\"code\":null}}",
          0);
    }
    if (key != null && api == Api.ANTHROPIC_MESSAGES && !key.equals(request.header("x-api-key"))) {
      return anthropicError(401, "authentication_error", "invalid x-api-key");
    }
    if (key != null
        && api != Api.ANTHROPIC_MESSAGES
        && !("Bearer " + key).equals(request.header("authorization"))) {
      return openAiError(
          401,
          "invalid_request_error",
          "invalid_api_key",
          "Incorrect API key provided: "
              + request.header("authorization")
              + ". You can find your API key at "
              + "https://platform.openai.com/account/api-keys.");
    }
    if (request.path().equals("/v1/messages/count_tokens")) {
      // Anthropic's estimate; roughly four characters a token, like its tokenizer on English text.
      return new Reply(
          200,
          Map.of("request-id", "req_count"),
          "{\"input_tokens\":" + Math.max(1, request.body().length / 4) + "}",
          0);
    }
    Responder responder = next(request);
    return responder != null ? responder.apply(request) : text("Done.", 10, 5).apply(request);
  }

  // --- Turns, in any API
  // --------------------------------------------------------------------------------------

  /**
   * A turn that calls one tool, by the caller's own tool name and JSON arguments, in the API and
   * mode the request uses. Anthropic's carries a short text block first, as Claude's replies do.
   */
  public Responder toolCall(
      String name, String argumentsJson, long inputTokens, long outputTokens) {
    return turn(
        new ScriptedTurn(
            null,
            List.of(new Call(name, argumentsJson)),
            false,
            new Usage(inputTokens, 0, outputTokens)));
  }

  /** A final text turn, in the API and mode the request uses. */
  public Responder text(String content, long inputTokens, long outputTokens) {
    return turn(
        new ScriptedTurn(content, List.of(), false, new Usage(inputTokens, 0, outputTokens)));
  }

  /**
   * A tool call; {@code arguments} is the raw JSON text the model wrote (it may be invalid) or an
   * object Jackson writes (a Map, a record, a JsonNode).
   */
  public static Call call(String name, Object arguments) {
    return new Call(
        name, arguments instanceof String raw ? raw : JSON.valueToTree(arguments).toString());
  }

  /** A turn calling one tool, with {@link Usage#TURN}. */
  public Responder toolCall(String name, Object arguments) {
    return toolCalls(null, call(name, arguments));
  }

  /** A turn calling these tools in parallel, after {@code text} unless it is null. */
  public Responder toolCalls(String text, Call... calls) {
    return turn(new ScriptedTurn(text, List.of(calls), false, Usage.TURN));
  }

  /** A final text turn, with {@link Usage#TURN}. */
  public Responder text(String content) {
    return turn(new ScriptedTurn(content, List.of(), false, Usage.TURN));
  }

  /**
   * A turn cut off at the output token limit ({@code length}, {@code max_tokens}, {@code
   * incomplete}): its calls' arguments may be cut short, the caller must not run them.
   */
  public Responder truncated(String text, Call... calls) {
    return turn(new ScriptedTurn(text, List.of(calls), true, Usage.TURN));
  }

  /** An error body in the shape of the request's API. */
  public Responder error(int status, String type, String message) {
    return request ->
        apiOf(request) == Api.ANTHROPIC_MESSAGES
            ? anthropicError(status, type, message)
            : openAiError(status, type, null, message);
  }

  /** A 429 with {@code retry-after}, in the shape and headers of the request's API. */
  public Responder rateLimited(int retryAfterSeconds) {
    return request ->
        apiOf(request) == Api.ANTHROPIC_MESSAGES
            ? anthropicRateLimited(retryAfterSeconds)
            : openAiRateLimited(retryAfterSeconds);
  }

  /** The runner's model endpoint's answer once the job's token budget is spent. */
  public static Reply budgetExceeded(String message) {
    ObjectNode body = JSON.createObjectNode();
    body.putObject("error").put("type", "budget_exceeded").put("message", message);
    return new Reply(429, Map.of(), body.toString(), 0);
  }

  /** A body as it is, e.g. a proxy's HTML page where JSON was expected. */
  public static Reply raw(int status, String contentType, String body) {
    return new Reply(status, Map.of("content-type", contentType), body, 0);
  }

  private Responder turn(ScriptedTurn turn) {
    return request -> render(request, turn);
  }

  private Reply render(Received request, ScriptedTurn turn) {
    Api api = apiOf(request);
    if (api == null) {
      throw new IllegalArgumentException("no API at " + request.path());
    }
    WireFormat format = formats.get(api);
    return request.streamed() ? format.events(request, turn) : format.body(request, turn);
  }

  // --- OpenAI Chat Completions
  // -------------------------------------------------------------------------------

  /** A reply whose assistant message calls one function tool. */
  public Responder openAiToolCall(
      String name, String argumentsJson, long promptTokens, long completionTokens) {
    return toolCall(name, argumentsJson, promptTokens, completionTokens);
  }

  /** A final text reply. */
  public Responder openAiText(String content, long promptTokens, long completionTokens) {
    return text(content, promptTokens, completionTokens);
  }

  /** An OpenAI error body: {@code {"error":{"message","type","param","code"}}}. */
  public static Reply openAiError(int status, String type, String code, String message) {
    return ChatCompletionsFormat.error(status, type, code, message);
  }

  /** OpenAI's 429 with its rate-limit headers. */
  public static Reply openAiRateLimited(int retryAfterSeconds) {
    return ChatCompletionsFormat.rateLimited(retryAfterSeconds);
  }

  // --- OpenAI Responses
  // --------------------------------------------------------------------------------------

  // --- Anthropic Messages
  // ------------------------------------------------------------------------------------

  /** A reply with a text block and one tool_use block. */
  public Responder anthropicToolUse(
      String name, String inputJson, long inputTokens, long outputTokens) {
    return toolCall(name, inputJson, inputTokens, outputTokens);
  }

  /** A final text reply. */
  public Responder anthropicText(String text, long inputTokens, long outputTokens) {
    return text(text, inputTokens, outputTokens);
  }

  /** A final text reply that also read {@code cacheReadTokens} from the prompt cache. */
  public Responder anthropicCachedText(
      String text, long inputTokens, long cacheReadTokens, long outputTokens) {
    return turn(
        new ScriptedTurn(
            text, List.of(), false, new Usage(inputTokens, cacheReadTokens, outputTokens)));
  }

  /** An Anthropic error body: {@code {"type":"error","error":{"type","message"}}}. */
  public static Reply anthropicError(int status, String type, String message) {
    return MessagesFormat.error(status, type, message);
  }

  /** Anthropic's 429 with {@code retry-after}. */
  public static Reply anthropicRateLimited(int retryAfterSeconds) {
    return MessagesFormat.rateLimited(retryAfterSeconds);
  }

  @Override
  public void close() {
    server.stop(0);
    threads.shutdownNow();
  }
}
