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
import io.vertx.core.WorkerExecutor;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;

/**
 * A job's only way to a model: an HTTP endpoint on a unix domain socket in the job's egress
 * directory (mounted into the container at {@code /run/spb/model.sock}), which forwards the agent's
 * calls to the runner's provider with the runner's key, which the container never sees.
 *
 * <p>It answers exactly one request per connection. Only {@code POST} to the provider's path
 * ({@code /v1/chat/completions} for openai, {@code /v1/messages} for anthropic) is forwarded, with
 * a JSON object body of at most {@link #MAX_BODY_BYTES}; its {@code model} is set to the job's
 * model (a request naming a model the runner does not offer is refused) and {@code stream} to
 * false. The provider's answer, status and body, is passed back unchanged except that the key,
 * should the provider echo it, is blanked. Every answer the endpoint gives itself is {@code
 * {"error":{"type":"...","message":"..."}}}:
 *
 * <ul>
 *   <li>400 malformed request, body not a JSON object, {@code model_not_allowed}; 404 any other
 *       method or path; 408 request not complete within {@link #READ_TIMEOUT}; 413 body too large;
 *       431 head too large;
 *   <li>429 {@code budget_exceeded} once the job's {@link TokenMeter} is exhausted;
 *   <li>502 {@code upstream_unreachable}, 504 {@code upstream_timeout} (the provider did not answer
 *       within {@code SPB_MODEL_TIMEOUT}); 503 beyond {@link #MAX_CONNECTIONS} connections.
 * </ul>
 *
 * Calls are forwarded one at a time, so a job overshoots its budget by at most the one call that
 * crossed it. Every request the endpoint answered is passed to the listener as a {@link
 * ModelCallRecord}.
 *
 * <p>Threading: {@link #start} binds the socket (Vert.x's HTTP server, see {@link JobSocket}) and
 * returns. Requests are read and answered on the server's event loop; the call to the provider,
 * which blocks, runs on the shared {@code spb-model-calls} worker pool. The listener is called on
 * the event loop, after the answer was written, possibly from several event loops at once: it must
 * be thread-safe and must not block; an exception it throws is logged and ignored. {@link #close()}
 * blocks briefly and is idempotent: it stops accepting, aborts open connections and upstream calls
 * (their workers are interrupted), and deletes the socket file.
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

  /** Calls in flight at once across the runner's jobs; each job forwards one at a time. */
  static final int CALL_THREADS = 32;

  private static final System.Logger LOG = System.getLogger(ModelEndpoint.class.getName());
  // Numbers are forwarded as the agent wrote them (0.70 stays 0.70, big integers stay exact).
  private static final ObjectMapper JSON =
      new ObjectMapper()
          .setNodeFactory(JsonNodeFactory.withExactBigDecimals(true))
          .enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS)
          .enable(JsonParser.Feature.STRICT_DUPLICATE_DETECTION);

  private final ProviderClient upstream;
  private final String model;
  private final TokenMeter meter;
  private final Consumer<? super ModelCallRecord> listener;
  private final Vertx vertx;
  private final WorkerExecutor calls;
  private final byte[] key;

  /** Workers blocked in a call of this endpoint: interrupted by {@link #close()}. */
  private final Set<Thread> calling = ConcurrentHashMap.newKeySet();

  private JobSocket server;
  private volatile boolean closed;
  private final ReentrantLock upstreamTurn = new ReentrantLock(true);

  private ModelEndpoint(
      Vertx vertx,
      ProviderClient upstream,
      String model,
      TokenMeter meter,
      Consumer<? super ModelCallRecord> listener) {
    this.vertx = vertx;
    // Shared by name across the runner's jobs; each call holds a thread for at most
    // SPB_MODEL_TIMEOUT.
    this.calls = vertx.createSharedWorkerExecutor("spb-model-calls", CALL_THREADS);
    this.upstream = upstream;
    this.model = model;
    this.meter = meter;
    this.listener = listener;
    this.key = upstream.config().apiKey().getBytes(StandardCharsets.US_ASCII);
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
    try {
      endpoint.server =
          JobSocket.bind(
              vertx,
              socketPath,
              new JobSocket.Limits(MAX_CONNECTIONS, MAX_HEAD_BYTES, READ_TIMEOUT),
              ANSWERS,
              new Refusal(503, "busy", "too many connections to the model endpoint"),
              request -> ModelExchange.serve(endpoint, request),
              refusal -> endpoint.recordUnread(refusal));
    } catch (IOException | RuntimeException e) {
      endpoint.calls.close();
      throw e;
    }
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
   * Stops accepting, aborts open connections and upstream calls (their workers are interrupted).
   */
  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    calling.forEach(Thread::interrupt);
    server.close();
    calls.close();
  }

  /** What one exchange answers, and what the record says about it. */
  record Outcome(
      int status,
      Map<String, String> headers,
      byte[] body,
      Usage usage,
      String error,
      boolean forwarded,
      boolean answered,
      long bytesUp,
      long bytesDown) {

    static Outcome refused(Refusal refusal) {
      return new Outcome(
          refusal.status(),
          Map.of("content-type", "application/json"),
          errorBody(refusal.type(), refusal.getMessage()),
          Usage.NONE,
          refusal.describe(),
          false,
          false,
          0,
          0);
    }
  }

  Vertx vertx() {
    return vertx;
  }

  /**
   * Refuses a request target that is not in origin form (400), and anything but POST to the
   * provider's path (404).
   */
  void route(String method, String target, String path) throws Refusal {
    if (!target.startsWith("/")) {
      throw Refusal.badRequest("malformed request line: not an origin-form request target");
    }
    if (!method.equals("POST") || !path.equals(provider().path())) {
      throw new Refusal(404, "not_found", "only POST " + provider().path() + " is served here");
    }
  }

  /**
   * Checks and forwards one request on a worker of {@code spb-model-calls}; the future never fails:
   * a refusal or an upstream failure is its outcome.
   *
   * @param anthropicVersion the agent's {@code anthropic-version} header, or null
   */
  Future<Outcome> call(byte[] body, String anthropicVersion) {
    return calls.executeBlocking(
        () -> {
          Thread worker = Thread.currentThread();
          calling.add(worker);
          try {
            if (closed) {
              throw new Refusal(503, "job_ending", "the job is ending");
            }
            return callBlocking(body, anthropicVersion);
          } catch (Refusal refusal) {
            return Outcome.refused(refusal);
          } finally {
            calling.remove(worker);
            // An interrupt meant for this call must not reach the pool's next task.
            Thread.interrupted();
          }
        },
        false);
  }

  /** Records a request whose head was refused before it reached an exchange. */
  private void recordUnread(Refusal refusal) {
    Outcome outcome = Outcome.refused(refusal);
    record(
        new ModelCallRecord(
            Instant.now(),
            provider().id(),
            model,
            "",
            "",
            outcome.status(),
            Usage.NONE,
            Duration.ZERO,
            new byte[0],
            false,
            outcome.error(),
            false,
            false,
            0,
            0));
  }

  /** Checks and forwards one request; blocks for the provider's answer. */
  private Outcome callBlocking(byte[] body, String anthropicVersion) throws Refusal {
    ObjectNode request = parseRequest(body);
    refuseWhenExhausted();
    provider().prepare(request, model);
    byte[] prepared = serialize(request);
    try {
      upstreamTurn.lockInterruptibly();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new Refusal(503, "job_ending", "the job is ending");
    }
    try {
      refuseWhenExhausted();
      ProviderClient.Answer answer = upstream.send(prepared, anthropicVersion);
      Usage usage = usageOf(answer.body());
      meter.add(usage);
      byte[] answered = redact(answer.body());
      Map<String, String> headers = new LinkedHashMap<>();
      answer
          .headers()
          .forEach(
              (name, value) ->
                  headers.put(
                      name,
                      new String(
                          redact(value.getBytes(StandardCharsets.ISO_8859_1)),
                          StandardCharsets.ISO_8859_1)));
      headers.putIfAbsent("content-type", "application/json");
      String error = answer.status() / 100 == 2 ? null : providerError(answer.status(), answered);
      return new Outcome(
          answer.status(),
          headers,
          answered,
          usage,
          error,
          true,
          true,
          prepared.length,
          answer.body().length);
    } catch (TimeoutException e) {
      return upstreamFailure(
          504,
          "upstream_timeout",
          "the provider did not answer within "
              + upstream.config().timeout().toSeconds()
              + " s (SPB_MODEL_TIMEOUT)",
          prepared.length);
    } catch (IOException e) {
      return upstreamFailure(
          502,
          "upstream_unreachable",
          "cannot reach the provider: " + e.getClass().getSimpleName(),
          prepared.length);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return upstreamFailure(503, "job_ending", "the job ended during the call", prepared.length);
    } finally {
      upstreamTurn.unlock();
    }
  }

  void record(ModelCallRecord record) {
    try {
      listener.accept(record);
    } catch (RuntimeException e) {
      LOG.log(System.Logger.Level.WARNING, "model call listener failed", e);
    }
  }

  private ObjectNode parseRequest(byte[] body) throws Refusal {
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
    return request;
  }

  private void refuseWhenExhausted() throws Refusal {
    if (meter.exhausted()) {
      Usage spent = meter.spent();
      throw new Refusal(
          429,
          "budget_exceeded",
          "the job's model budget of "
              + meter.budget()
              + " tokens is spent ("
              + spent.total()
              + " used): commit and push your partial work now");
    }
  }

  private static byte[] serialize(ObjectNode request) {
    try {
      return JSON.writeValueAsBytes(request);
    } catch (IOException e) {
      throw new IllegalStateException("cannot serialise a parsed request", e);
    }
  }

  private Usage usageOf(byte[] answer) {
    try {
      return provider().usage(JSON.readTree(answer));
    } catch (IOException | RuntimeException e) {
      return Usage.NONE;
    }
  }

  private static String providerError(int status, byte[] answer) {
    String kind = "";
    try {
      JsonNode error = JSON.readTree(answer).path("error");
      JsonNode type = error.path("type").isTextual() ? error.path("type") : error.path("code");
      kind = type.isTextual() ? " (" + type.asText() + ")" : "";
    } catch (IOException | RuntimeException e) {
      // Not JSON: the status says enough.
    }
    return "provider answered " + status + kind;
  }

  private static Outcome upstreamFailure(int status, String type, String message, long bytesUp) {
    return new Outcome(
        status,
        Map.of("content-type", "application/json"),
        errorBody(type, message),
        Usage.NONE,
        type + ": " + message,
        true,
        false,
        bytesUp,
        0);
  }

  static byte[] errorBody(String type, String message) {
    ObjectNode body = JSON.createObjectNode();
    body.putObject("error").put("type", type).put("message", message);
    return serialize(body);
  }

  /**
   * The body with every occurrence of the key replaced: a provider may quote the key it was given.
   */
  private byte[] redact(byte[] data) {
    int at = indexOf(data, key, 0);
    if (at < 0) {
      return data;
    }
    byte[] mask = "[redacted]".getBytes(StandardCharsets.US_ASCII);
    ByteArrayOutputStream out = new ByteArrayOutputStream(data.length);
    int from = 0;
    while (at >= 0) {
      out.write(data, from, at - from);
      out.write(mask, 0, mask.length);
      from = at + key.length;
      at = indexOf(data, key, from);
    }
    out.write(data, from, data.length - from);
    return out.toByteArray();
  }

  private static int indexOf(byte[] data, byte[] pattern, int from) {
    outer:
    for (int i = from; i <= data.length - pattern.length; i++) {
      for (int j = 0; j < pattern.length; j++) {
        if (data[i + j] != pattern[j]) {
          continue outer;
        }
      }
      return i;
    }
    return -1;
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
