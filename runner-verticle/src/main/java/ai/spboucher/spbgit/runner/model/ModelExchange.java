package ai.spboucher.spbgit.runner.model;

import ai.spboucher.spbgit.runner.sockets.JobSocket;
import ai.spboucher.spbgit.runner.sockets.Refusal;
import io.vertx.core.Future;
import io.vertx.core.MultiMap;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.HttpServerResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;

/**
 * One request to a {@link ModelEndpoint}, from its parsed head to its record: checks the route and
 * the declared length (before answering {@code 100 Continue}), collects the body up to {@link
 * ModelEndpoint#MAX_BODY_BYTES} (it is checked as a whole JSON object before anything is sent),
 * waits for one of the job's call slots, and has an {@link UpstreamCall} forward it and relay the
 * answer. The connection stays open for the next request, unless the request was refused before its
 * body was read.
 *
 * <p>Threading: every method runs on the event loop of the request's connection.
 */
final class ModelExchange {

  private final ModelEndpoint endpoint;
  private final HttpServerRequest request;
  private final Instant startedAt = Instant.now();
  private final long startNanos = System.nanoTime();
  private final Buffer body = Buffer.buffer();
  private ModelApi api;
  private boolean bodyTruncated;
  private boolean settled;
  private UpstreamCall call;
  private long readTimer = -1;
  private Runnable stopWatchingClose = () -> {};

  private ModelExchange(ModelEndpoint endpoint, HttpServerRequest request) {
    this.endpoint = endpoint;
    this.request = request;
  }

  /** Serves {@code request}; called on its event loop with the head just parsed. */
  static void serve(ModelEndpoint endpoint, HttpServerRequest request) {
    endpoint.opened();
    new ModelExchange(endpoint, request).start();
  }

  private void start() {
    stopWatchingClose = JobSocket.whenClosed(request.connection(), this::connectionClosed);
    try {
      api = endpoint.route(request.method().name(), request.uri(), request.path());
      checkDeclaredLength();
    } catch (Refusal refusal) {
      request.pause();
      refuse(refusal, true);
      return;
    }
    readTimer =
        endpoint
            .vertx()
            .setTimer(
                ModelEndpoint.READ_TIMEOUT.toMillis(),
                id ->
                    refuse(
                        new Refusal(
                            408,
                            "request_timeout",
                            "request not complete within "
                                + ModelEndpoint.READ_TIMEOUT.toSeconds()
                                + " s"),
                        true));
    request.handler(this::collect);
    request.exceptionHandler(
        e -> refuse(Refusal.badRequest("malformed request body: " + e.getMessage()), true));
    request.endHandler(v -> forward());
    if ("100-continue".equalsIgnoreCase(request.getHeader("expect"))) {
      request.response().writeContinue();
    }
  }

  /**
   * The agent's connection closed. After the answer ended that is no disconnect: the endpoint's own
   * {@code Connection: close}, or the client's, closes it right after the answer is written.
   */
  private void connectionClosed() {
    if (request.response().ended()) {
      return;
    }
    if (call != null) {
      call.abandon();
    } else {
      settle(
          ModelEndpoint.Outcome.refused(
              Refusal.badRequest("connection ended before the request was complete")));
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
      refuse(tooLarge(), true);
      return;
    }
    body.appendBuffer(chunk);
  }

  private void forward() {
    if (settled || bodyTruncated) {
      return;
    }
    endpoint.vertx().cancelTimer(readTimer);
    // A copy of the only headers any provider forwards: the call may start after the request ends.
    MultiMap agentHeaders = MultiMap.caseInsensitiveMultiMap();
    for (String name : List.of(ModelProvider.VERSION_HEADER, ModelProvider.BETA_HEADER)) {
      String value = request.getHeader(name);
      if (value != null) {
        agentHeaders.set(name, value);
      }
    }
    endpoint
        .prepare(api, body.getBytes())
        .compose(
            prepared ->
                endpoint.slots().acquire().compose(slot -> call(prepared, agentHeaders, slot)))
        .onFailure(this::failed);
  }

  /** Forwards the prepared call in its slot, unless the budget is spent or the agent left. */
  private Future<Void> call(
      ModelEndpoint.Prepared prepared, MultiMap agentHeaders, CallSlots.Slot slot) {
    if (settled) {
      slot.release();
      return Future.succeededFuture();
    }
    try {
      endpoint.refuseWhenExhausted();
    } catch (Refusal refusal) {
      slot.release();
      return Future.failedFuture(refusal);
    }
    call = UpstreamCall.start(endpoint, api, request.response(), prepared.body(), agentHeaders);
    return call.outcome()
        .onComplete(done -> slot.release())
        .map(
            outcome -> {
              settle(outcome);
              return null;
            });
  }

  /** A refusal before the call (the checks, the slot, the budget) or an unanswered call. */
  private void failed(Throwable cause) {
    if (settled) {
      return;
    }
    if (cause instanceof Refusal refusal) {
      refuse(refusal, false);
    } else if (cause instanceof UpstreamFailure failure) {
      answer(failure.refusal(), false);
      settle(
          new ModelEndpoint.Outcome(
              failure.refusal().status(),
              failure.counted(),
              failure.refusal().describe(),
              true,
              false,
              body.length(),
              failure.bytesDown(),
              false));
    } else {
      refuse(new Refusal(500, "endpoint_error", "the model endpoint failed"), true);
    }
  }

  private static Refusal tooLarge() {
    return new Refusal(
        413,
        "request_too_large",
        "request body larger than " + ModelEndpoint.MAX_BODY_BYTES + " bytes");
  }

  /** Answers and records a refusal; {@code close} when the rest of the request was not read. */
  private void refuse(Refusal refusal, boolean close) {
    if (settled) {
      return;
    }
    answer(refusal, close);
    settle(ModelEndpoint.Outcome.refused(refusal));
  }

  private void answer(Refusal refusal, boolean close) {
    HttpServerResponse response = request.response();
    if (response.closed()) {
      return;
    }
    if (response.headWritten()) {
      request.connection().close();
      return;
    }
    response.headers().clear();
    response.setStatusCode(refusal.status()).putHeader("content-type", "application/json");
    if (refusal.status() == 503) {
      response.putHeader("retry-after", "1");
    }
    if (close) {
      response.putHeader("connection", "close");
    }
    response
        .end(Buffer.buffer(ModelEndpoint.errorBody(refusal.type(), refusal.getMessage())))
        .onComplete(
            written -> {
              if (close) {
                request.connection().close();
              }
            });
  }

  private void settle(ModelEndpoint.Outcome outcome) {
    if (settled) {
      return;
    }
    settled = true;
    stopWatchingClose.run();
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
            outcome.bytesDown(),
            outcome.streamed()));
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
