package ai.spboucher.spbgit.runner.model;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.Semaphore;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;

/**
 * A job's only way to a model: an HTTP endpoint on a unix domain socket in the job's egress directory (mounted
 * into the container at {@code /run/spb/model.sock}), which forwards the agent's calls to the runner's provider
 * with the runner's key, which the container never sees.
 *
 * <p>It answers exactly one request per connection. Only {@code POST} to the provider's path
 * ({@code /v1/chat/completions} for openai, {@code /v1/messages} for anthropic) is forwarded, with a JSON object
 * body of at most {@link #MAX_BODY_BYTES}; its {@code model} is set to the job's model (a request naming a model
 * the runner does not offer is refused) and {@code stream} to false. The provider's answer, status and body, is
 * passed back unchanged except that the key, should the provider echo it, is blanked. Every answer the endpoint
 * gives itself is {@code {"error":{"type":"...","message":"..."}}}:
 * <ul>
 *   <li>400 malformed request, body not a JSON object, {@code model_not_allowed}; 404 any other method or path;
 *       408 request not complete within {@link #READ_TIMEOUT}; 413 body too large; 431 head too large;</li>
 *   <li>429 {@code budget_exceeded} once the job's {@link TokenMeter} is exhausted;</li>
 *   <li>502 {@code upstream_unreachable}, 504 {@code upstream_timeout} (the provider did not answer within
 *       {@code SPB_MODEL_TIMEOUT}); 503 beyond {@link #MAX_CONNECTIONS} connections.</li>
 * </ul>
 * Calls are forwarded one at a time, so a job overshoots its budget by at most the one call that crossed it.
 * Every request the endpoint answered is passed to the listener as a {@link ModelCallRecord}.
 *
 * <p>Threading: {@link #start} binds the socket and returns. One accept thread hands each connection to a
 * bounded pool of daemon worker threads. The listener is called on the worker that served the call, after the
 * answer was written, possibly from several workers at once: it must be thread-safe and must not block; an
 * exception it throws is logged and ignored. {@link #close()} is idempotent: it stops accepting, aborts open
 * connections and upstream calls, and deletes the socket file.
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
  static final Duration WRITE_TIMEOUT = Duration.ofSeconds(60);

  private static final System.Logger LOG = System.getLogger(ModelEndpoint.class.getName());
  private static final AtomicInteger INSTANCES = new AtomicInteger();
  // Numbers are forwarded as the agent wrote them (0.70 stays 0.70, big integers stay exact).
  private static final ObjectMapper JSON = new ObjectMapper()
      .setNodeFactory(JsonNodeFactory.withExactBigDecimals(true))
      .enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS)
      .enable(JsonParser.Feature.STRICT_DUPLICATE_DETECTION);

  private final Path socketPath;
  private final ProviderClient upstream;
  private final String model;
  private final TokenMeter meter;
  private final Consumer<? super ModelCallRecord> listener;
  private final ServerSocketChannel server;
  private final byte[] key;
  private final Semaphore permits = new Semaphore(MAX_CONNECTIONS);
  private final Set<ModelExchange> open = ConcurrentHashMap.newKeySet();
  private final ReentrantLock upstreamTurn = new ReentrantLock(true);
  private final ThreadPoolExecutor workers;
  private final ScheduledThreadPoolExecutor timer;
  private final Thread acceptor;
  private volatile boolean closed;

  private ModelEndpoint(Path socketPath, ProviderClient upstream, String model, TokenMeter meter,
                        Consumer<? super ModelCallRecord> listener, ServerSocketChannel server) {
    this.socketPath = socketPath;
    this.upstream = upstream;
    this.model = model;
    this.meter = meter;
    this.listener = listener;
    this.server = server;
    this.key = upstream.config().apiKey().getBytes(StandardCharsets.US_ASCII);
    String name = "spb-model-" + INSTANCES.incrementAndGet();
    this.workers = new ThreadPoolExecutor(0, MAX_CONNECTIONS, 30, TimeUnit.SECONDS, new SynchronousQueue<>(),
        daemonThreads(name + "-worker-"));
    this.timer = new ScheduledThreadPoolExecutor(1, daemonThreads(name + "-timer-"));
    this.timer.setRemoveOnCancelPolicy(true);
    this.acceptor = new Thread(this::acceptLoop, name + "-accept");
    this.acceptor.setDaemon(true);
  }

  /**
   * Binds {@code socketPath} (which must not exist), makes it mode 0666 so the container's unprivileged user can
   * connect, and starts accepting.
   *
   * @param model the job's model, one of the provider's allowed models
   */
  public static ModelEndpoint start(Path socketPath, ProviderClient upstream, String model, TokenMeter meter,
                                    Consumer<? super ModelCallRecord> listener) throws IOException {
    Objects.requireNonNull(listener, "listener");
    if (!upstream.config().allowedModels().contains(model)) {
      throw new IllegalArgumentException("model " + model + " is not offered by this runner");
    }
    ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
    boolean bound = false;
    try {
      server.bind(UnixDomainSocketAddress.of(socketPath), MAX_CONNECTIONS);
      bound = true;
      Files.setPosixFilePermissions(socketPath, PosixFilePermissions.fromString("rw-rw-rw-"));
      ModelEndpoint endpoint = new ModelEndpoint(socketPath, upstream, model, meter, listener, server);
      endpoint.acceptor.start();
      return endpoint;
    } catch (IOException | RuntimeException e) {
      server.close();
      if (bound) {
        Files.deleteIfExists(socketPath);
      }
      throw e;
    }
  }

  public Path socketPath() {
    return socketPath;
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

  @Override
  public void close() {
    synchronized (this) {
      if (closed) {
        return;
      }
      closed = true;
    }
    try {
      server.close();
      acceptor.join(2000);
      open.forEach(ModelExchange::abort);
      // Interrupts workers waiting for their turn or for the provider; their upstream exchanges are cancelled.
      workers.shutdownNow();
      workers.awaitTermination(2, TimeUnit.SECONDS);
      timer.shutdownNow();
    } catch (IOException e) {
      LOG.log(System.Logger.Level.WARNING, "cannot close model socket " + socketPath + ": " + e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } finally {
      try {
        Files.deleteIfExists(socketPath);
      } catch (IOException e) {
        LOG.log(System.Logger.Level.WARNING, "cannot delete model socket " + socketPath + ": " + e);
      }
    }
  }

  /** What one exchange answers, and what the record says about it. */
  record Outcome(int status, Map<String, String> headers, byte[] body, Usage usage, String error,
                 boolean forwarded, boolean answered, long bytesUp, long bytesDown) {

    static Outcome refused(Refusal refusal) {
      return new Outcome(refusal.status(), Map.of("content-type", "application/json"),
          errorBody(refusal.type(), refusal.getMessage()), Usage.NONE, refusal.describe(), false, false, 0, 0);
    }
  }

  ScheduledThreadPoolExecutor timer() {
    return timer;
  }

  /** Refuses, with 404, anything but POST to the provider's path. */
  void route(HttpHead head) throws Refusal {
    if (!head.method().equals("POST") || !head.path().equals(provider().path())) {
      throw new Refusal(404, "not_found", "only POST " + provider().path() + " is served here");
    }
  }

  /** Checks and forwards one request; blocks for the provider's answer. */
  Outcome call(HttpHead head, byte[] body) throws Refusal {
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
      ProviderClient.Answer answer = upstream.send(prepared, head.header(ModelProvider.VERSION_HEADER));
      Usage usage = usageOf(answer.body());
      meter.add(usage);
      byte[] answered = redact(answer.body());
      Map<String, String> headers = new java.util.LinkedHashMap<>();
      answer.headers().forEach((name, value) -> headers.put(name, new String(
          redact(value.getBytes(StandardCharsets.ISO_8859_1)), StandardCharsets.ISO_8859_1)));
      headers.putIfAbsent("content-type", "application/json");
      String error = answer.status() / 100 == 2 ? null : providerError(answer.status(), answered);
      return new Outcome(answer.status(), headers, answered, usage, error, true, true, prepared.length,
          answer.body().length);
    } catch (TimeoutException e) {
      return upstreamFailure(504, "upstream_timeout", "the provider did not answer within "
          + upstream.config().timeout().toSeconds() + " s", prepared.length);
    } catch (IOException e) {
      return upstreamFailure(502, "upstream_unreachable", "cannot reach the provider: "
          + e.getClass().getSimpleName(), prepared.length);
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

  void ended(ModelExchange exchange) {
    if (open.remove(exchange)) {
      permits.release();
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
      if (!asked.asText().equals(model) && !upstream.config().allowedModels().contains(asked.asText())) {
        throw new Refusal(400, "model_not_allowed", "this job may use only " + model);
      }
    }
    return request;
  }

  private void refuseWhenExhausted() throws Refusal {
    if (meter.exhausted()) {
      Usage spent = meter.spent();
      throw new Refusal(429, "budget_exceeded", "the job's model budget of " + meter.budget()
          + " tokens is spent (" + spent.total() + " used): commit and push your partial work now");
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
    return new Outcome(status, Map.of("content-type", "application/json"), errorBody(type, message), Usage.NONE,
        type + ": " + message, true, false, bytesUp, 0);
  }

  static byte[] errorBody(String type, String message) {
    ObjectNode body = JSON.createObjectNode();
    body.putObject("error").put("type", type).put("message", message);
    return serialize(body);
  }

  /** The body with every occurrence of the key replaced: a provider may quote the key it was given. */
  private byte[] redact(byte[] data) {
    int at = indexOf(data, key, 0);
    if (at < 0) {
      return data;
    }
    byte[] mask = "[redacted]".getBytes(StandardCharsets.US_ASCII);
    java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream(data.length);
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

  private void acceptLoop() {
    while (!closed) {
      SocketChannel client;
      try {
        client = server.accept();
      } catch (ClosedChannelException e) {
        return;
      } catch (IOException e) {
        LOG.log(System.Logger.Level.WARNING, "model endpoint accept failed on " + socketPath + ": " + e);
        sleepQuietly(100);
        continue;
      }
      admit(client);
    }
  }

  private void admit(SocketChannel client) {
    if (!permits.tryAcquire()) {
      refuseBusy(client);
      return;
    }
    ModelExchange exchange = new ModelExchange(this, client);
    open.add(exchange);
    try {
      workers.execute(exchange);
    } catch (RejectedExecutionException e) {
      ended(exchange);
      refuseBusy(client);
    }
  }

  /** Answers 503 from the accept thread without ever blocking on it. */
  private static void refuseBusy(SocketChannel client) {
    byte[] body = errorBody("busy", "too many connections to the model endpoint");
    byte[] head = ("HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\ncontent-length: "
        + body.length + "\r\nconnection: close\r\n\r\n").getBytes(StandardCharsets.US_ASCII);
    try (client) {
      client.configureBlocking(false);
      client.write(new ByteBuffer[] {ByteBuffer.wrap(head), ByteBuffer.wrap(body)});
    } catch (IOException e) {
      LOG.log(System.Logger.Level.DEBUG, "could not send 503: " + e);
    }
  }

  private static ThreadFactory daemonThreads(String prefix) {
    AtomicInteger count = new AtomicInteger();
    return runnable -> {
      Thread thread = new Thread(runnable, prefix + count.incrementAndGet());
      thread.setDaemon(true);
      return thread;
    };
  }

  private static void sleepQuietly(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
