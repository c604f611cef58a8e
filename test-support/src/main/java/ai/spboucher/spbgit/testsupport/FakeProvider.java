package ai.spboucher.spbgit.testsupport;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
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

  /**
   * One model turn, rendered in whichever API and mode the request asked for: text, tool calls (run
   * in parallel by the caller), or both; a {@code truncated} turn was cut off at the output token
   * limit.
   */
  private record Turn(String text, List<Call> calls, boolean truncated, Usage usage) {

    boolean callsTool() {
      return !calls.isEmpty();
    }
  }

  /** Thrown out of the exchange so the server closes the socket without ending the chunked body. */
  private static final class DroppedStream extends RuntimeException {
    DroppedStream() {
      super("stream dropped by the script", null, false, false);
    }
  }

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
      Map<String, List<String>> headers = new LinkedHashMap<>();
      exchange
          .getRequestHeaders()
          .forEach(
              (name, values) -> headers.put(name.toLowerCase(Locale.ROOT), List.copyOf(values)));
      Received request =
          new Received(
              exchange.getRequestMethod(),
              exchange.getRequestURI().getPath(),
              exchange.getRequestURI().getRawQuery(),
              headers,
              exchange.getRequestBody().readAllBytes());
      received.add(request);
      reply = answer(request);
      if (reply.delayMs() > 0) {
        Thread.sleep(reply.delayMs());
      }
      exchange.getResponseHeaders().set("set-cookie", "__cf_bm=fake; path=/");
      if (!reply.isStream() && reply.dropAfterEvents() >= 0) {
        throw new DroppedStream();
      }
      if (reply.isStream()) {
        stream(exchange, reply);
      } else {
        byte[] body = reply.body().getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().set("content-type", "application/json");
        reply.headers().forEach((name, value) -> exchange.getResponseHeaders().set(name, value));
        // A HEAD (Claude Code's connectivity probe) gets the status alone.
        boolean head = exchange.getRequestMethod().equals("HEAD");
        exchange.sendResponseHeaders(reply.status(), body.length == 0 || head ? -1 : body.length);
        if (!head) {
          exchange.getResponseBody().write(body);
        }
      }
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

  /**
   * Writes each event as its own chunk and flushes it, so the client sees the stream as it is
   * produced.
   */
  private void stream(HttpExchange exchange, Reply reply) throws IOException, InterruptedException {
    exchange.getResponseHeaders().set("content-type", "text/event-stream; charset=utf-8");
    exchange.getResponseHeaders().set("cache-control", "no-cache");
    reply.headers().forEach((name, value) -> exchange.getResponseHeaders().set(name, value));
    exchange.sendResponseHeaders(reply.status(), 0);
    OutputStream out = exchange.getResponseBody();
    for (int i = 0; i < reply.events().size(); i++) {
      if (i == reply.dropAfterEvents()) {
        // HttpServer closes the connection, without the terminating chunk, when a handler throws.
        throw new DroppedStream();
      }
      out.write(reply.events().get(i).getBytes(StandardCharsets.UTF_8));
      out.flush();
      if (i + 1 == holdAfter && release != null) {
        release.await(30, TimeUnit.SECONDS);
      }
      if (reply.eventGapMs() > 0) {
        Thread.sleep(reply.eventGapMs());
      }
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
        new Turn(
            null,
            List.of(new Call(name, argumentsJson)),
            false,
            new Usage(inputTokens, 0, outputTokens)));
  }

  /** A final text turn, in the API and mode the request uses. */
  public Responder text(String content, long inputTokens, long outputTokens) {
    return turn(new Turn(content, List.of(), false, new Usage(inputTokens, 0, outputTokens)));
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
    return turn(new Turn(text, List.of(calls), false, Usage.TURN));
  }

  /** A final text turn, with {@link Usage#TURN}. */
  public Responder text(String content) {
    return turn(new Turn(content, List.of(), false, Usage.TURN));
  }

  /**
   * A turn cut off at the output token limit ({@code length}, {@code max_tokens}, {@code
   * incomplete}): its calls' arguments may be cut short, the caller must not run them.
   */
  public Responder truncated(String text, Call... calls) {
    return turn(new Turn(text, List.of(calls), true, Usage.TURN));
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

  private Responder turn(Turn turn) {
    return request -> render(request, turn);
  }

  private Reply render(Received request, Turn turn) {
    Api api = apiOf(request);
    if (api == null) {
      throw new IllegalArgumentException("no API at " + request.path());
    }
    boolean stream = request.streamed();
    return switch (api) {
      case OPENAI_CHAT -> stream ? openAiChunks(request, turn) : openAiCompletion(request, turn);
      case OPENAI_RESPONSES ->
          stream ? responsesEvents(request, turn) : responsesBody(request, turn);
      case ANTHROPIC_MESSAGES ->
          stream ? anthropicEvents(request, turn) : anthropicMessage(request, turn);
    };
  }

  /** Cuts a string into about three pieces, as providers split text and arguments across deltas. */
  private static List<String> pieces(String whole) {
    List<String> pieces = new ArrayList<>();
    int size = Math.max(1, (whole.length() + 2) / 3);
    for (int from = 0; from < whole.length(); from += size) {
      pieces.add(whole.substring(from, Math.min(whole.length(), from + size)));
    }
    if (pieces.isEmpty()) {
      pieces.add("");
    }
    return pieces;
  }

  private static String model(Received request) {
    return request.json().path("model").asText();
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

  private Reply openAiCompletion(Received request, Turn turn) {
    ObjectNode message = JSON.createObjectNode().put("role", "assistant");
    message.put("content", turn.text()).putNull("refusal");
    if (turn.callsTool()) {
      ArrayNode toolCalls = message.putArray("tool_calls");
      for (Call call : turn.calls()) {
        toolCalls
            .addObject()
            .put("id", "call_" + ids.incrementAndGet())
            .put("type", "function")
            .putObject("function")
            .put("name", call.name())
            .put("arguments", call.arguments());
      }
    }
    ObjectNode body = openAiEnvelope(request, "chat.completion");
    ObjectNode choice = body.putArray("choices").addObject().put("index", 0);
    choice.set("message", message);
    choice.putNull("logprobs");
    choice.put("finish_reason", openAiFinishReason(turn));
    body.set("usage", openAiUsage(turn.usage()));
    body.put("service_tier", "default").put("system_fingerprint", "fp_fake");
    return new Reply(
        200,
        Map.of("x-request-id", "req_" + ids.get()),
        body.toString(),
        0,
        null,
        0,
        -1,
        turn.usage());
  }

  private Reply openAiChunks(Received request, Turn turn) {
    String id = "chatcmpl-" + ids.incrementAndGet();
    boolean includeUsage =
        request.json().path("stream_options").path("include_usage").asBoolean(false);
    List<String> events = new ArrayList<>();
    // The role comes with the first delta: the text's, else the first call's header.
    ObjectNode first = JSON.createObjectNode().put("role", "assistant");
    if (turn.text() != null) {
      first.put("content", "").putNull("refusal");
      events.add(openAiChunk(request, id, first, null, includeUsage));
      first = null;
      for (String piece : pieces(turn.text())) {
        events.add(
            openAiChunk(
                request, id, JSON.createObjectNode().put("content", piece), null, includeUsage));
      }
    }
    for (int index = 0; index < turn.calls().size(); index++) {
      Call call = turn.calls().get(index);
      ObjectNode header = first != null ? first.putNull("content") : JSON.createObjectNode();
      first = null;
      header
          .putArray("tool_calls")
          .addObject()
          .put("index", index)
          .put("id", "call_" + ids.incrementAndGet())
          .put("type", "function")
          .putObject("function")
          .put("name", call.name())
          .put("arguments", "");
      events.add(openAiChunk(request, id, header, null, includeUsage));
      for (String piece : pieces(call.arguments())) {
        ObjectNode delta = JSON.createObjectNode();
        delta
            .putArray("tool_calls")
            .addObject()
            .put("index", index)
            .putObject("function")
            .put("arguments", piece);
        events.add(openAiChunk(request, id, delta, null, includeUsage));
      }
    }
    events.add(
        openAiChunk(request, id, JSON.createObjectNode(), openAiFinishReason(turn), includeUsage));
    if (includeUsage) {
      ObjectNode last = openAiEnvelope(request, "chat.completion.chunk").put("id", id);
      last.putArray("choices");
      last.set("usage", openAiUsage(turn.usage()));
      events.add("data: " + last + "\n\n");
    }
    events.add("data: [DONE]\n\n");
    // Without include_usage the stream carries no usage at all, as OpenAI's does.
    return Reply.streamed(
        Map.of("x-request-id", "req_" + ids.get()),
        events,
        includeUsage ? turn.usage() : Usage.NONE);
  }

  private static String openAiFinishReason(Turn turn) {
    return turn.truncated() ? "length" : turn.callsTool() ? "tool_calls" : "stop";
  }

  private String openAiChunk(
      Received request, String id, ObjectNode delta, String finishReason, boolean includeUsage) {
    ObjectNode chunk = openAiEnvelope(request, "chat.completion.chunk").put("id", id);
    ObjectNode choice = chunk.putArray("choices").addObject().put("index", 0);
    choice.set("delta", delta);
    choice.putNull("logprobs");
    if (finishReason == null) {
      choice.putNull("finish_reason");
    } else {
      choice.put("finish_reason", finishReason);
    }
    if (includeUsage) {
      chunk.putNull("usage");
    }
    return "data: " + chunk + "\n\n";
  }

  private ObjectNode openAiEnvelope(Received request, String object) {
    return JSON.createObjectNode()
        .put("id", "chatcmpl-" + ids.incrementAndGet())
        .put("object", object)
        .put("created", System.currentTimeMillis() / 1000)
        .put("model", model(request))
        .put("system_fingerprint", "fp_fake");
  }

  private static ObjectNode openAiUsage(Usage usage) {
    ObjectNode node =
        JSON.createObjectNode()
            .put("prompt_tokens", usage.inputTokens())
            .put("completion_tokens", usage.outputTokens())
            .put("total_tokens", usage.inputTokens() + usage.outputTokens());
    node.putObject("prompt_tokens_details")
        .put("cached_tokens", usage.cacheReadTokens())
        .put("audio_tokens", 0);
    node.putObject("completion_tokens_details")
        .put("reasoning_tokens", 0)
        .put("audio_tokens", 0)
        .put("accepted_prediction_tokens", 0)
        .put("rejected_prediction_tokens", 0);
    return node;
  }

  /** An OpenAI error body: {@code {"error":{"message","type","param","code"}}}. */
  public static Reply openAiError(int status, String type, String code, String message) {
    ObjectNode body = JSON.createObjectNode();
    ObjectNode error =
        body.putObject("error").put("message", message).put("type", type).putNull("param");
    if (code == null) {
      error.putNull("code");
    } else {
      error.put("code", code);
    }
    return new Reply(status, Map.of(), body.toString(), 0);
  }

  /** OpenAI's 429 with its rate-limit headers. */
  public static Reply openAiRateLimited(int retryAfterSeconds) {
    Reply error =
        openAiError(
            429,
            "requests",
            "rate_limit_exceeded",
            "Rate limit reached, please retry in " + retryAfterSeconds + "s.");
    return new Reply(
        429,
        Map.of(
            "retry-after",
            String.valueOf(retryAfterSeconds),
            "x-ratelimit-limit-requests",
            "500",
            "x-ratelimit-remaining-requests",
            "0",
            "x-ratelimit-reset-requests",
            retryAfterSeconds + "s"),
        error.body(),
        0);
  }

  // --- OpenAI Responses
  // --------------------------------------------------------------------------------------

  /** One output item of a Responses turn: a message with {@code text}, or a function call. */
  private record Output(String itemId, String text, Call call) {}

  /** The turn's output items: its text as a message, then one function call per tool call. */
  private List<Output> responsesOutputs(Turn turn) {
    List<Output> outputs = new ArrayList<>();
    if (turn.text() != null) {
      outputs.add(new Output("msg_" + ids.incrementAndGet(), turn.text(), null));
    }
    for (Call call : turn.calls()) {
      outputs.add(new Output("fc_" + ids.incrementAndGet(), null, call));
    }
    return outputs;
  }

  private static ObjectNode responsesItem(Output output, boolean done) {
    ObjectNode item = JSON.createObjectNode();
    if (output.call() != null) {
      item.put("type", "function_call")
          .put("id", output.itemId())
          .put("call_id", "call_" + output.itemId())
          .put("name", output.call().name())
          .put("arguments", done ? output.call().arguments() : "");
    } else {
      item.put("type", "message").put("id", output.itemId()).put("role", "assistant");
      ArrayNode content = item.putArray("content");
      if (done) {
        content
            .addObject()
            .put("type", "output_text")
            .put("text", output.text())
            .putArray("annotations");
      }
    }
    return item.put("status", done ? "completed" : "in_progress");
  }

  /** The response object; {@code outputs} and {@code turn} are null while it is in progress. */
  private ObjectNode responsesObject(Received request, String id, List<Output> outputs, Turn turn) {
    String status = turn == null ? "in_progress" : turn.truncated() ? "incomplete" : "completed";
    ObjectNode response =
        JSON.createObjectNode()
            .put("id", id)
            .put("object", "response")
            .put("created_at", System.currentTimeMillis() / 1000)
            .put("status", status)
            .put("model", model(request));
    if (turn != null && turn.truncated()) {
      response.putObject("incomplete_details").put("reason", "max_output_tokens");
    }
    ArrayNode output = response.putArray("output");
    if (outputs != null) {
      outputs.forEach(item -> output.add(responsesItem(item, true)));
    }
    if (turn == null) {
      response.putNull("usage");
    } else {
      Usage usage = turn.usage();
      ObjectNode node = response.putObject("usage").put("input_tokens", usage.inputTokens());
      node.putObject("input_tokens_details").put("cached_tokens", usage.cacheReadTokens());
      node.put("output_tokens", usage.outputTokens());
      node.putObject("output_tokens_details").put("reasoning_tokens", 0);
      node.put("total_tokens", usage.inputTokens() + usage.outputTokens());
    }
    return response;
  }

  private Reply responsesBody(Received request, Turn turn) {
    List<Output> outputs = responsesOutputs(turn);
    ObjectNode body = responsesObject(request, "resp_" + ids.incrementAndGet(), outputs, turn);
    return new Reply(
        200,
        Map.of("x-request-id", "req_" + ids.get()),
        body.toString(),
        0,
        null,
        0,
        -1,
        turn.usage());
  }

  private Reply responsesEvents(Received request, Turn turn) {
    String id = "resp_" + ids.incrementAndGet();
    List<Output> outputs = responsesOutputs(turn);
    ResponsesStream out = new ResponsesStream();
    out.event(
        "response.created", node -> node.set("response", responsesObject(request, id, null, null)));
    out.event(
        "response.in_progress",
        node -> node.set("response", responsesObject(request, id, null, null)));
    for (int index = 0; index < outputs.size(); index++) {
      responsesItemEvents(out, index, outputs.get(index));
    }
    String last = turn.truncated() ? "response.incomplete" : "response.completed";
    out.event(last, node -> node.set("response", responsesObject(request, id, outputs, turn)));
    return Reply.streamed(Map.of("x-request-id", "req_" + ids.get()), out.events, turn.usage());
  }

  private static void responsesItemEvents(ResponsesStream out, int index, Output output) {
    String itemId = output.itemId();
    out.event(
        "response.output_item.added",
        node -> node.put("output_index", index).set("item", responsesItem(output, false)));
    if (output.call() != null) {
      for (String piece : pieces(output.call().arguments())) {
        out.event(
            "response.function_call_arguments.delta",
            node -> node.put("item_id", itemId).put("output_index", index).put("delta", piece));
      }
      out.event(
          "response.function_call_arguments.done",
          node ->
              node.put("item_id", itemId)
                  .put("output_index", index)
                  .put("arguments", output.call().arguments()));
    } else {
      out.event(
          "response.content_part.added",
          node ->
              node.put("item_id", itemId)
                  .put("output_index", index)
                  .put("content_index", 0)
                  .set("part", outputText("")));
      for (String piece : pieces(output.text())) {
        out.event(
            "response.output_text.delta",
            node ->
                node.put("item_id", itemId)
                    .put("output_index", index)
                    .put("content_index", 0)
                    .put("delta", piece));
      }
      out.event(
          "response.output_text.done",
          node ->
              node.put("item_id", itemId)
                  .put("output_index", index)
                  .put("content_index", 0)
                  .put("text", output.text()));
      out.event(
          "response.content_part.done",
          node ->
              node.put("item_id", itemId)
                  .put("output_index", index)
                  .put("content_index", 0)
                  .set("part", outputText(output.text())));
    }
    out.event(
        "response.output_item.done",
        node -> node.put("output_index", index).set("item", responsesItem(output, true)));
  }

  private static ObjectNode outputText(String text) {
    return JSON.createObjectNode()
        .put("type", "output_text")
        .put("text", text)
        .set("annotations", JSON.createArrayNode());
  }

  /**
   * Responses events carry their type twice (the SSE event name and "type") and a sequence number.
   */
  private static final class ResponsesStream {
    final List<String> events = new ArrayList<>();

    void event(String type, Consumer<ObjectNode> fill) {
      ObjectNode node =
          JSON.createObjectNode().put("type", type).put("sequence_number", events.size());
      fill.accept(node);
      events.add("event: " + type + "\ndata: " + node + "\n\n");
    }
  }

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
        new Turn(text, List.of(), false, new Usage(inputTokens, cacheReadTokens, outputTokens)));
  }

  /**
   * A text block (a turn that only calls tools says which first, as Claude's replies do), then a
   * tool_use block per call.
   */
  private ArrayNode anthropicContent(Turn turn) {
    ArrayNode content = JSON.createArrayNode();
    String text = turn.text();
    if (text == null) {
      text = turn.callsTool() ? "Let me use " + turn.calls().get(0).name() + "." : "";
    }
    content.addObject().put("type", "text").put("text", text);
    for (Call call : turn.calls()) {
      try {
        content
            .addObject()
            .put("type", "tool_use")
            .put("id", "toolu_" + ids.incrementAndGet())
            .put("name", call.name())
            .set("input", JSON.readTree(call.arguments()));
      } catch (IOException e) {
        throw new IllegalArgumentException(e);
      }
    }
    return content;
  }

  private static String anthropicStopReason(Turn turn) {
    return turn.truncated() ? "max_tokens" : turn.callsTool() ? "tool_use" : "end_turn";
  }

  private ObjectNode anthropicEnvelope(Received request, String id) {
    return JSON.createObjectNode()
        .put("id", id)
        .put("type", "message")
        .put("role", "assistant")
        .put("model", model(request));
  }

  private static ObjectNode anthropicUsage(Usage usage, long outputTokens) {
    return JSON.createObjectNode()
        .put("input_tokens", usage.inputTokens())
        .put("cache_creation_input_tokens", 0)
        .put("cache_read_input_tokens", usage.cacheReadTokens())
        .put("output_tokens", outputTokens);
  }

  private Reply anthropicMessage(Received request, Turn turn) {
    ObjectNode body = anthropicEnvelope(request, "msg_" + ids.incrementAndGet());
    body.set("content", anthropicContent(turn));
    body.put("stop_reason", anthropicStopReason(turn)).putNull("stop_sequence");
    body.set("usage", anthropicUsage(turn.usage(), turn.usage().outputTokens()));
    return new Reply(
        200,
        Map.of("request-id", "req_" + ids.get()),
        body.toString(),
        0,
        null,
        0,
        -1,
        turn.usage());
  }

  private Reply anthropicEvents(Received request, Turn turn) {
    ObjectNode message = anthropicEnvelope(request, "msg_" + ids.incrementAndGet());
    message.putArray("content");
    message.putNull("stop_reason").putNull("stop_sequence");
    // message_start reports the input and a first output token; message_delta the output total.
    message.set("usage", anthropicUsage(turn.usage(), 1));
    List<String> events = new ArrayList<>();
    events.add(anthropicEvent("message_start", JSON.createObjectNode().set("message", message)));
    events.add(anthropicEvent("ping", JSON.createObjectNode()));
    ArrayNode content = anthropicContent(turn);
    for (int index = 0; index < content.size(); index++) {
      ObjectNode block = (ObjectNode) content.get(index);
      boolean toolUse = block.path("type").asText().equals("tool_use");
      ObjectNode start = block.deepCopy();
      if (toolUse) {
        start.putObject("input");
      } else {
        start.put("text", "");
      }
      events.add(
          anthropicEvent(
              "content_block_start",
              JSON.createObjectNode().put("index", index).set("content_block", start)));
      String whole = toolUse ? block.path("input").toString() : block.path("text").asText();
      for (String piece : pieces(whole)) {
        ObjectNode delta =
            toolUse
                ? JSON.createObjectNode().put("type", "input_json_delta").put("partial_json", piece)
                : JSON.createObjectNode().put("type", "text_delta").put("text", piece);
        events.add(
            anthropicEvent(
                "content_block_delta",
                JSON.createObjectNode().put("index", index).set("delta", delta)));
      }
      events.add(anthropicEvent("content_block_stop", JSON.createObjectNode().put("index", index)));
    }
    ObjectNode delta =
        JSON.createObjectNode()
            .put("stop_reason", anthropicStopReason(turn))
            .putNull("stop_sequence");
    ObjectNode messageDelta = JSON.createObjectNode();
    messageDelta.set("delta", delta);
    messageDelta.putObject("usage").put("output_tokens", turn.usage().outputTokens());
    events.add(anthropicEvent("message_delta", messageDelta));
    events.add(anthropicEvent("message_stop", JSON.createObjectNode()));
    return Reply.streamed(Map.of("request-id", "req_" + ids.get()), events, turn.usage());
  }

  private static String anthropicEvent(String type, ObjectNode data) {
    ObjectNode node = JSON.createObjectNode().put("type", type);
    node.setAll(data);
    return "event: " + type + "\ndata: " + node + "\n\n";
  }

  /** An Anthropic error body: {@code {"type":"error","error":{"type","message"}}}. */
  public static Reply anthropicError(int status, String type, String message) {
    ObjectNode body = JSON.createObjectNode().put("type", "error");
    body.putObject("error").put("type", type).put("message", message);
    return new Reply(status, Map.of("request-id", "req_err"), body.toString(), 0);
  }

  /** Anthropic's 429 with {@code retry-after}. */
  public static Reply anthropicRateLimited(int retryAfterSeconds) {
    Reply error =
        anthropicError(
            429,
            "rate_limit_error",
            "Number of request tokens has exceeded your per-minute " + "rate limit");
    return new Reply(
        429,
        Map.of(
            "retry-after",
            String.valueOf(retryAfterSeconds),
            "anthropic-ratelimit-requests-remaining",
            "0",
            "request-id",
            "req_rl"),
        error.body(),
        0);
  }

  @Override
  public void close() {
    server.stop(0);
    threads.shutdownNow();
  }
}
