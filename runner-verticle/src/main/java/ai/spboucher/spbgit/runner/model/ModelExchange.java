package ai.spboucher.spbgit.runner.model;

import ai.spboucher.spbgit.runner.sockets.JobSocket;
import ai.spboucher.spbgit.runner.sockets.Refusal;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.HttpServerResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.Map;

/**
 * One request to a {@link ModelEndpoint}, from its parsed head to its record: checks the route and
 * the declared length (before answering {@code 100 Continue}), collects the body up to {@link
 * ModelEndpoint#MAX_BODY_BYTES}, has the endpoint forward it on a worker, writes the answer and
 * closes the connection. One request per connection. The body is collected whole because the
 * provider is asked for a complete answer; a streaming passthrough would pipe {@code request} to
 * the provider's request and its response to {@code response} here.
 *
 * <p>Threading: every method runs on the event loop of the request's connection; only {@link
 * ModelEndpoint#call} runs on a worker.
 */
final class ModelExchange {

  private final ModelEndpoint endpoint;
  private final HttpServerRequest request;
  private final Instant startedAt = Instant.now();
  private final long startNanos = System.nanoTime();
  private Buffer body = Buffer.buffer();
  private boolean bodyTruncated;
  private boolean settled;
  private boolean forwarding;
  private long readTimer = -1;

  private ModelExchange(ModelEndpoint endpoint, HttpServerRequest request) {
    this.endpoint = endpoint;
    this.request = request;
  }

  /** Serves {@code request}; called on its event loop with the head just parsed. */
  static void serve(ModelEndpoint endpoint, HttpServerRequest request) {
    new ModelExchange(endpoint, request).start();
  }

  private void start() {
    // A call in flight is answered (into the closed connection) and recorded with what the provider
    // said.
    JobSocket.whenClosed(
        request.connection(),
        () -> {
          if (!forwarding) {
            settle(
                ModelEndpoint.Outcome.refused(
                    Refusal.badRequest("connection ended before the request was complete")));
          }
        });
    try {
      endpoint.route(request.method().name(), request.uri(), request.path());
      checkDeclaredLength();
    } catch (Refusal refusal) {
      request.pause();
      answer(ModelEndpoint.Outcome.refused(refusal));
      return;
    }
    readTimer =
        endpoint
            .vertx()
            .setTimer(
                ModelEndpoint.READ_TIMEOUT.toMillis(),
                id ->
                    answer(
                        ModelEndpoint.Outcome.refused(
                            new Refusal(
                                408,
                                "request_timeout",
                                "request not complete within "
                                    + ModelEndpoint.READ_TIMEOUT.toSeconds()
                                    + " s"))));
    request.handler(this::collect);
    request.exceptionHandler(
        e ->
            answer(
                ModelEndpoint.Outcome.refused(
                    Refusal.badRequest("malformed request body: " + e.getMessage()))));
    request.endHandler(v -> forward());
    if ("100-continue".equalsIgnoreCase(request.getHeader("expect"))) {
      request.response().writeContinue();
    }
  }

  /**
   * Refuses, before the agent sends it, a body declared too large or framed in a way other than
   * these two.
   */
  private void checkDeclaredLength() throws Refusal {
    String encoding = request.getHeader("transfer-encoding");
    if (encoding != null && !encoding.equalsIgnoreCase("chunked")) {
      throw Refusal.badRequest("unsupported transfer-encoding");
    }
    String length = request.getHeader("content-length");
    if (length != null && Long.parseLong(length) > ModelEndpoint.MAX_BODY_BYTES) {
      bodyTruncated = true;
      throw tooLarge();
    }
  }

  private void collect(Buffer chunk) {
    if (settled || bodyTruncated) {
      return;
    }
    if (body.length() + chunk.length() > ModelEndpoint.MAX_BODY_BYTES) {
      bodyTruncated = true;
      answer(ModelEndpoint.Outcome.refused(tooLarge()));
      return;
    }
    body.appendBuffer(chunk);
  }

  private void forward() {
    if (settled || bodyTruncated) {
      return;
    }
    endpoint.vertx().cancelTimer(readTimer);
    forwarding = true;
    byte[] sent = body.getBytes();
    String version = request.getHeader(ModelProvider.VERSION_HEADER);
    endpoint
        .call(sent, version)
        .onComplete(
            done ->
                answer(
                    done.succeeded()
                        ? done.result()
                        : ModelEndpoint.Outcome.refused(
                            new Refusal(500, "endpoint_error", "the model endpoint failed"))));
  }

  private static Refusal tooLarge() {
    return new Refusal(
        413,
        "request_too_large",
        "request body larger than " + ModelEndpoint.MAX_BODY_BYTES + " bytes");
  }

  /** Writes the outcome (once), closes the connection after it, and records the call. */
  private void answer(ModelEndpoint.Outcome outcome) {
    if (settled) {
      return;
    }
    HttpServerResponse response = request.response();
    response.setStatusCode(outcome.status());
    for (Map.Entry<String, String> header : outcome.headers().entrySet()) {
      response.putHeader(header.getKey(), header.getValue().replaceAll("[\\x00-\\x1f\\x7f]", ""));
    }
    response.putHeader("connection", "close");
    response.end(Buffer.buffer(outcome.body())).onComplete(written -> request.connection().close());
    settle(outcome);
  }

  private void settle(ModelEndpoint.Outcome outcome) {
    if (settled) {
      return;
    }
    settled = true;
    endpoint.vertx().cancelTimer(readTimer);
    byte[] sent = body.getBytes();
    endpoint.record(
        new ModelCallRecord(
            startedAt,
            endpoint.provider().id(),
            endpoint.model(),
            request.method().name(),
            request.path() == null ? request.uri() : request.path(),
            outcome.status(),
            outcome.usage(),
            Duration.ofNanos(System.nanoTime() - startNanos),
            recordedRequest(sent, ModelEndpoint.RECORDED_REQUEST_BYTES),
            bodyTruncated || sent.length > ModelEndpoint.RECORDED_REQUEST_BYTES,
            outcome.error(),
            outcome.forwarded(),
            outcome.answered(),
            outcome.bytesUp(),
            outcome.bytesDown()));
  }

  /**
   * The body as sent, or, when longer than the record holds, its start and its end around a note of
   * what was left out. Each request repeats the whole transcript so far: the start holds the system
   * prompt, the tools and the task, the end what is new in this call (earlier calls' records hold
   * what lies between).
   */
  static byte[] recordedRequest(byte[] body, int max) {
    if (body.length <= max) {
      return body;
    }
    int head = max / 8;
    String note =
        "\n\u2026 "
            + body.length
            + " bytes in all; "
            + (body.length - max)
            + "+ bytes in the middle are"
            + " not recorded \u2026\n";
    byte[] marker = note.getBytes(StandardCharsets.UTF_8);
    int tail = max - head - marker.length;
    byte[] recorded = Arrays.copyOf(body, max);
    System.arraycopy(marker, 0, recorded, head, marker.length);
    System.arraycopy(body, body.length - tail, recorded, head + marker.length, tail);
    return recorded;
  }
}
