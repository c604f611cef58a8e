package ai.spboucher.spbgit.runner.model;

import ai.spboucher.spbgit.runner.sockets.JobSocket;
import ai.spboucher.spbgit.runner.sockets.Refusal;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/**
 * A job's only way to a model: an HTTP endpoint on a unix domain socket in the job's egress
 * directory (mounted into the container at {@code /run/spb/model.sock}), which forwards the agent's
 * calls to the runner's provider with the runner's key, which the container never sees.
 *
 * <p>Connections are kept alive: many requests, one after the other, on each. Only {@code POST} to
 * one of the provider's {@link ModelApi} paths is forwarded (openai: {@code /v1/chat/completions},
 * {@code /v1/responses}; anthropic: {@code /v1/messages}, {@code /v1/messages/count_tokens}); a
 * query string, such as Claude Code's {@code ?beta=true}, is accepted and not forwarded (the SDK's
 * beta client marks itself with it; what it selects travels in headers), so the sandbox cannot pass
 * parameters the runner does not check. The body is a JSON object of at most {@link
 * #MAX_BODY_BYTES} that holds only what its API's positive list admits: fields, content parts and
 * tools known to stay inside the provider's model ({@link ModelApi#admit}; anything else is
 * refused, never forwarded). Its {@code model} is set to the job's model (a request naming a model
 * the runner does not offer is refused), a streamed chat completion asks for its usage, and a
 * Responses call is not stored ({@link ModelApi#prepare}). The provider's answer, status and body,
 * is passed back as it comes, streamed when the agent asked for a stream ({@link UpstreamCall}),
 * except that the key, should the provider echo it, is blanked. Every answer the endpoint gives
 * itself is {@code {"error":{"type":"...","message":"..."}}}:
 *
 * <ul>
 *   <li>400 malformed request, body not a JSON object, {@code model_not_allowed}, {@code
 *       feature_not_allowed} (naming the field the positive list lacks); 404 any other method or
 *       path; 408 request not complete within {@link #READ_TIMEOUT}; 413 body too large; 431 head
 *       too large (the connection is closed after these, except the JSON checks);
 *   <li>429 {@code budget_exceeded} once the job's {@link TokenMeter} is exhausted;
 *   <li>502 {@code upstream_unreachable}, 502 {@code upstream_dropped} (the provider closed the
 *       connection after the call was sent, before its answer's head), 504 {@code upstream_timeout}
 *       (the provider sent nothing for {@code SPB_MODEL_TIMEOUT}); 503 {@code busy} beyond {@link
 *       #MAX_CONNECTIONS} connections, 503 {@code too_many_calls} for a call that waited {@code
 *       SPB_MODEL_TIMEOUT} for one of the job's {@code SPB_MODEL_CONCURRENCY} call slots ({@link
 *       CallSlots}).
 * </ul>
 *
 * <p>The budget: a call is refused once the meter is exhausted; while calls are in flight each
 * claims its estimated usage, and a stream is cut with the API's error event once the spend plus
 * every claim passes the budget, which then counts as exhausted. The overshoot is bounded by the
 * calls in flight: at most {@code SPB_MODEL_CONCURRENCY} calls, each adding one event's tokens
 * after the crossing when streamed, its whole answer (up to its {@code max_tokens}) when not, plus
 * the difference between the estimates and what the provider bills. Every request the endpoint
 * answered is passed to the listener as a {@link ModelCallRecord}.
 *
 * <p>Threading: {@link #start} binds the socket (Vert.x's HTTP server, see {@link JobSocket}) and
 * returns. Requests are read, forwarded and answered on the server's event loop, the provider
 * client non-blocking on the same loop; only a large body's JSON is parsed on a worker. The
 * listener is called on the event loop, after the answer was written, possibly from several event
 * loops at once: it must be thread-safe and must not block; an exception it throws is logged and
 * ignored. {@link #close()} blocks briefly (never call it on an event loop) and is idempotent: it
 * stops accepting, aborts open connections and their upstream calls, waits until each is recorded,
 * and deletes the socket file.
 */
public final class ModelEndpoint implements AutoCloseable {

  /** The socket's file name in the job's egress directory. */
  public static final String SOCKET_NAME = "model.sock";

  public static final int MAX_BODY_BYTES = 4 << 20;

  /** How much of each request body the call record keeps. */
  public static final int RECORDED_REQUEST_BYTES = 256 << 10;

  public static final int MAX_CONNECTIONS = 8;
  static final int MAX_HEAD_BYTES = 64 << 10;
  static final Duration READ_TIMEOUT = Duration.ofSeconds(60);

  /** Bodies up to this size are parsed on the event loop; larger ones on a worker. */
  static final int INLINE_PARSE_BYTES = 64 << 10;

  private static final Duration CLOSE_WAIT = Duration.ofSeconds(5);
  private static final System.Logger LOG = System.getLogger(ModelEndpoint.class.getName());

  // Numbers are forwarded as the agent wrote them (0.70 stays 0.70, big integers stay exact).
  static final ObjectMapper JSON =
      new ObjectMapper()
          .setNodeFactory(JsonNodeFactory.withExactBigDecimals(true))
          .enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS)
          .enable(JsonParser.Feature.STRICT_DUPLICATE_DETECTION);

  private final ProviderClient upstream;
  private final String model;
  private final TokenMeter meter;
  private final Consumer<? super ModelCallRecord> listener;
  private final Vertx vertx;
  private final CallSlots slots;
  private final byte[] key;

  /** Requests read but not yet recorded: {@link #close()} waits for them. */
  private final AtomicInteger unrecorded = new AtomicInteger();

  private JobSocket server;
  private volatile boolean closed;

  private ModelEndpoint(
      Vertx vertx,
      ProviderClient upstream,
      String model,
      TokenMeter meter,
      Consumer<? super ModelCallRecord> listener) {
    this.vertx = vertx;
    this.upstream = upstream;
    this.model = model;
    this.meter = meter;
    this.listener = listener;
    this.key = upstream.config().apiKey().getBytes(StandardCharsets.US_ASCII);
    this.slots = new CallSlots(vertx, upstream.config().concurrency(), upstream.config().timeout());
  }

  /**
   * Binds {@code socketPath} (which must not exist), makes it mode 0666 so the container's
   * unprivileged user can connect, and starts accepting.
   *
   * @param model the job's model, one of the provider's allowed models
   */
  public static ModelEndpoint start(
      Vertx vertx,
      Path socketPath,
      ProviderClient upstream,
      String model,
      TokenMeter meter,
      Consumer<? super ModelCallRecord> listener)
      throws IOException {
    Objects.requireNonNull(listener, "listener");
    if (!upstream.config().allowedModels().contains(model)) {
      throw new IllegalArgumentException("model " + model + " is not offered by this runner");
    }
    ModelEndpoint endpoint = new ModelEndpoint(vertx, upstream, model, meter, listener);
    endpoint.server =
        JobSocket.bind(
            vertx,
            socketPath,
            new JobSocket.Limits(MAX_CONNECTIONS, MAX_HEAD_BYTES, READ_TIMEOUT, true),
            ANSWERS,
            new Refusal(503, "busy", "too many connections to the model endpoint"),
            request -> ModelExchange.serve(endpoint, request),
            endpoint::recordUnread);
    return endpoint;
  }

  public Path socketPath() {
    return server.socketPath();
  }

  public ModelProvider provider() {
    return upstream.config().provider();
  }

  public String model() {
    return model;
  }

  public TokenMeter meter() {
    return meter;
  }

  /**
   * Stops accepting, aborts open connections and their upstream calls, and waits (briefly) until
   * every request read is recorded.
   */
  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    server.close();
    long deadline = System.nanoTime() + CLOSE_WAIT.toNanos();
    while (unrecorded.get() > 0 && System.nanoTime() < deadline) {
      try {
        Thread.sleep(10);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
    }
  }

  /** What one exchange answered, and what the record says about it. */
  record Outcome(
      int status,
      Usage usage,
      String error,
      boolean forwarded,
      boolean answered,
      long bytesUp,
      long bytesDown,
      boolean streamed) {

    static Outcome refused(Refusal refusal) {
      return new Outcome(
          refusal.status(), Usage.NONE, refusal.describe(), false, false, 0, 0, false);
    }
  }

  /** A request admitted by its API's positive list ({@link ModelApi#admit}), ready to send. */
  record Prepared(ModelApi api, Buffer body) {}

  Vertx vertx() {
    return vertx;
  }

  ProviderClient upstream() {
    return upstream;
  }

  CallSlots slots() {
    return slots;
  }

  byte[] key() {
    return key;
  }

  boolean closed() {
    return closed;
  }

  KeyRedactor redactor() {
    return new KeyRedactor(key);
  }

  String redactHeader(String value) {
    return new String(
        KeyRedactor.redactAll(key, value.getBytes(StandardCharsets.ISO_8859_1)),
        StandardCharsets.ISO_8859_1);
  }

  /** Counts a request read, until {@link #record} records it. */
  void opened() {
    unrecorded.incrementAndGet();
  }

  /**
   * The API a request is for: refuses a target that is not in origin form (400), and anything but
   * POST to one of the provider's paths (404).
   */
  ModelApi route(String method, String target, String path) throws Refusal {
    if (!target.startsWith("/")) {
      throw Refusal.badRequest("malformed request line: not an origin-form request target");
    }
    ModelApi api = method.equals("POST") ? provider().api(path).orElse(null) : null;
    if (api == null) {
      throw new Refusal(
          404,
          "not_found",
          "only POST to "
              + String.join(", ", provider().apis().stream().map(ModelApi::path).toList())
              + " is served here");
    }
    return api;
  }

  /** Checks and prepares a body: on a worker when it is large, since parsing it takes a while. */
  Future<Prepared> prepare(ModelApi api, byte[] body) {
    if (body.length <= INLINE_PARSE_BYTES) {
      try {
        return Future.succeededFuture(prepareNow(api, body));
      } catch (Refusal refusal) {
        return Future.failedFuture(refusal);
      }
    }
    return vertx.executeBlocking(() -> prepareNow(api, body), false);
  }

  /** Refuses a call once the meter is exhausted. */
  void refuseWhenExhausted() throws Refusal {
    if (closed) {
      throw new Refusal(503, "job_ending", "the job is ending");
    }
    if (meter.exhausted()) {
      throw new Refusal(429, "budget_exceeded", budgetMessage());
    }
  }

  String budgetMessage() {
    return "the job's model budget of "
        + meter.budget()
        + " tokens is spent ("
        + meter.spent().total()
        + " used): commit and push your partial work now";
  }

  void record(ModelCallRecord record) {
    try {
      listener.accept(record);
    } catch (RuntimeException e) {
      LOG.log(System.Logger.Level.WARNING, "model call listener failed", e);
    } finally {
      if (!record.method().isEmpty()) {
        unrecorded.decrementAndGet();
      }
    }
  }

  /** Records a request whose head was refused before it reached an exchange. */
  private void recordUnread(Refusal refusal) {
    record(
        new ModelCallRecord(
            Instant.now(),
            provider().id(),
            model,
            "",
            "",
            refusal.status(),
            Usage.NONE,
            Duration.ZERO,
            new byte[0],
            false,
            refusal.describe(),
            false,
            false,
            0,
            0,
            false));
  }

  private Prepared prepareNow(ModelApi api, byte[] body) throws Refusal {
    JsonNode parsed;
    try {
      parsed = JSON.readTree(body);
    } catch (IOException e) {
      throw Refusal.badRequest("the body is not valid JSON");
    }
    if (!(parsed instanceof ObjectNode request)) {
      throw Refusal.badRequest("the body must be a JSON object");
    }
    JsonNode asked = request.get("model");
    if (asked != null && !asked.isNull()) {
      if (!asked.isTextual()) {
        throw Refusal.badRequest("model must be a string");
      }
      if (!asked.asText().equals(model)
          && !upstream.config().allowedModels().contains(asked.asText())) {
        throw new Refusal(400, "model_not_allowed", "this job may use only " + model);
      }
    }
    api.admit(request);
    api.prepare(request, model);
    try {
      return new Prepared(api, Buffer.buffer(JSON.writeValueAsBytes(request)));
    } catch (IOException e) {
      throw new IllegalStateException("cannot serialise a parsed request", e);
    }
  }

  static byte[] errorBody(String type, String message) {
    ObjectNode body = JSON.createObjectNode();
    body.putObject("error").put("type", type).put("message", message);
    try {
      return JSON.writeValueAsBytes(body);
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }

  /**
   * The endpoint's own answers, as the agent's model client expects them: {@code {"error":{...}}}.
   */
  private static final JobSocket.Answers ANSWERS =
      new JobSocket.Answers() {
        @Override
        public String contentType() {
          return "application/json";
        }

        @Override
        public byte[] body(Refusal refusal) {
          return errorBody(refusal.type(), refusal.getMessage());
        }
      };
}
