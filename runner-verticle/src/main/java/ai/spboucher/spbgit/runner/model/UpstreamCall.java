package ai.spboucher.spbgit.runner.model;

import ai.spboucher.spbgit.runner.sockets.Refusal;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.MultiMap;
import io.vertx.core.Promise;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClientRequest;
import io.vertx.core.http.HttpClientResponse;
import io.vertx.core.http.HttpServerResponse;
import java.io.IOException;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeoutException;

/**
 * One call forwarded to the provider, and its answer relayed to the agent as it comes: a
 * server-sent event stream chunk by chunk (the key blanked, even across chunks; usage and generated
 * text read from the events as they pass; the chunks that arrive in one turn of the event loop
 * written together at its end, so a fast provider costs one write per read rather than per event;
 * the provider paused while the agent's socket cannot take more), any other answer whole. A stream
 * is cut, with the API's own error event, when the job's spend plus the claims of its calls in
 * flight pass the budget ({@link TokenMeter}), or ends with one when the provider drops it or goes
 * silent beyond {@code SPB_MODEL_TIMEOUT}.
 *
 * <p>Threading: confined to the event loop of the agent's connection, on which the provider
 * client's handlers run too.
 */
final class UpstreamCall {

  /** The largest answer that is not streamed which the endpoint relays (it holds it whole). */
  static final int MAX_ANSWER_BYTES = 64 << 20;

  /**
   * What of a stream is gathered before it is written at once, even within one turn of the event
   * loop (a provider's chunks read together go out together, at the end of that turn).
   */
  static final int PENDING_FLUSH_BYTES = 32 << 10;

  private final ModelEndpoint endpoint;
  private final ModelApi api;
  private final HttpServerResponse response;
  private final Buffer body;
  private final TokenMeter.Claim claim;
  private final StreamTally tally;
  private final KeyRedactor redactor;
  private final SseScanner scanner = new SseScanner();
  private final Context context;
  private Buffer pending = Buffer.buffer();
  private boolean flushScheduled;
  private final Promise<ModelEndpoint.Outcome> outcome = Promise.promise();
  private HttpClientRequest request;
  private HttpClientResponse answer;
  private Buffer whole;
  private long bytesDown;
  private boolean abandoned;
  private boolean cut;
  private boolean paused;
  private long lastChunkNanos;
  private long silenceTimer = -1;

  private UpstreamCall(
      ModelEndpoint endpoint, ModelApi api, HttpServerResponse response, Buffer body) {
    this.endpoint = endpoint;
    this.api = api;
    this.response = response;
    this.body = body;
    this.tally = new StreamTally(body.length());
    this.claim = endpoint.meter().claim(tally.estimate().total());
    this.redactor = endpoint.redactor();
    // Created on the agent connection's event loop: its context, where the answer is relayed.
    this.context = endpoint.vertx().getOrCreateContext();
  }

  /**
   * Sends {@code body} (prepared) and relays the answer into {@code response}. The future fails
   * with a {@link Refusal} when nothing was written yet (the provider could not be reached or
   * answered nothing in time), so the caller answers it; otherwise it completes once the answer
   * ended, with what the record says.
   */
  static UpstreamCall start(
      ModelEndpoint endpoint,
      ModelApi api,
      HttpServerResponse response,
      Buffer body,
      MultiMap agentHeaders) {
    UpstreamCall call = new UpstreamCall(endpoint, api, response, body);
    endpoint
        .upstream()
        .open(endpoint.vertx(), api, agentHeaders)
        .compose(
            request -> {
              call.request = request;
              if (call.abandoned) {
                ProviderClient.abort(request);
              }
              return ProviderClient.send(request, body);
            })
        .onSuccess(call::relay)
        .onFailure(call::unanswered);
    return call;
  }

  Future<ModelEndpoint.Outcome> outcome() {
    return outcome.future();
  }

  /**
   * The agent left: the provider's answer is dropped, the call counted at what it had seen. Once
   * the answer ended the agent had it whole, so its leaving changes nothing (a client that asked
   * for {@code Connection: close} leaves right then).
   */
  void abandon() {
    if (response.ended()) {
      return;
    }
    abandoned = true;
    if (answer == null && request != null) {
      // Still waiting for the answer's head: the failure that follows is recorded.
      ProviderClient.abort(request);
    } else if (answer != null) {
      finish(
          tally.estimate(),
          "agent_disconnected: the agent closed its connection during the answer",
          true);
      ProviderClient.abort(answer.request());
    }
  }

  private void relay(HttpClientResponse answer) {
    this.answer = answer;
    if (abandoned) {
      ProviderClient.abort(answer.request());
      finish(Usage.NONE, "agent_disconnected: the agent closed its connection", false);
      return;
    }
    String type = answer.getHeader("content-type");
    boolean stream = type != null && type.toLowerCase(Locale.ROOT).startsWith("text/event-stream");
    response.setStatusCode(answer.statusCode());
    for (Map.Entry<String, String> header :
        ProviderClient.passedHeaders(answer.headers()).entrySet()) {
      response.putHeader(header.getKey(), endpoint.redactHeader(header.getValue()));
    }
    answer.exceptionHandler(this::failed);
    lastChunkNanos = System.nanoTime();
    watchSilence(endpoint.upstream().config().timeout().toMillis());
    if (stream) {
      response.setChunked(true);
      answer.handler(this::streamChunk);
      answer.endHandler(v -> streamEnded());
      response.writeHead();
    } else {
      whole = Buffer.buffer();
      answer.handler(this::collect);
      answer.endHandler(v -> answerEnded());
    }
    answer.resume();
  }

  /**
   * The client's idle timeout covers the wait for the head only: past it, a provider silent for
   * {@code SPB_MODEL_TIMEOUT} between two chunks fails the call here. While the agent's socket
   * holds the provider back (paused), the silence is the agent's, not the provider's.
   */
  private void watchSilence(long delayMs) {
    silenceTimer =
        endpoint
            .vertx()
            .setTimer(
                Math.max(1, delayMs),
                id -> {
                  if (outcome.future().isComplete()) {
                    return;
                  }
                  long timeout = endpoint.upstream().config().timeout().toMillis();
                  long quiet = (System.nanoTime() - lastChunkNanos) / 1_000_000;
                  if (paused || quiet < timeout) {
                    watchSilence(paused ? timeout : timeout - quiet);
                    return;
                  }
                  failed(new TimeoutException("silent for " + quiet + " ms"));
                  ProviderClient.abort(answer.request());
                });
  }

  private void streamChunk(Buffer chunk) {
    if (cut || outcome.future().isComplete()) {
      return;
    }
    lastChunkNanos = System.nanoTime();
    bytesDown += chunk.length();
    byte[] bytes = chunk.getBytes();
    int through = scanner.scan(bytes, 0, bytes.length, this::streamEvent);
    byte[] out = redactor.feed(bytes, 0, through);
    if (cut) {
      // Counted before the agent reads the error, so its next call is refused.
      Usage counted = tally.estimate();
      claim.settle(counted);
      endpoint.meter().cutOff();
      pending.appendBytes(out);
      end(api.errorEventBytes("budget_exceeded", endpoint.budgetMessage()));
      finish(
          counted,
          "budget_exceeded: stream cut after "
              + counted.total()
              + " tokens (estimated) as the job's spend and its calls in flight passed the budget",
          true);
      // After the outcome: the abort's own failure, reported at once, is then not the reason.
      ProviderClient.abort(answer.request());
      return;
    }
    pending.appendBytes(out);
    if (pending.length() >= PENDING_FLUSH_BYTES) {
      flushPending();
    } else if (!flushScheduled && pending.length() > 0) {
      // One write (one syscall, one HTTP chunk) for all the chunks of this turn of the loop: the
      // provider's chunks read in one go are relayed in one go, none waits past the turn.
      flushScheduled = true;
      context.runOnContext(v -> flushPending());
    }
  }

  /** Writes what is gathered; holds the provider back while the agent's socket is full. */
  private void flushPending() {
    flushScheduled = false;
    if (pending.length() == 0 || response.ended() || response.closed()) {
      return;
    }
    Buffer out = pending;
    pending = Buffer.buffer();
    response.write(out);
    if (response.writeQueueFull() && !paused) {
      paused = true;
      answer.pause();
      response.drainHandler(
          v -> {
            paused = false;
            lastChunkNanos = System.nanoTime();
            answer.resume();
          });
    }
  }

  /** Ends the stream with what is gathered, what is held back, then {@code last}. */
  private void end(byte[] last) {
    if (response.ended()) {
      return;
    }
    Buffer out = pending.appendBytes(redactor.flush()).appendBytes(last);
    pending = Buffer.buffer();
    response.end(out);
  }

  private void streamEvent(String event, String data, int end) {
    if (!data.startsWith("{")) {
      return;
    }
    try {
      api.readEvent(event, data, tally);
    } catch (IOException | RuntimeException e) {
      // Not an event of the API's (a comment, a fragment of a broken stream): nothing to count.
      return;
    }
    if (claim.update(tally.estimate().total())) {
      cut = true;
      scanner.stop();
    }
  }

  private void streamEnded() {
    if (outcome.future().isComplete()) {
      return;
    }
    Usage usage = tally.complete() ? tally.reported() : tally.estimate();
    claim.settle(usage);
    end(new byte[0]);
    finish(usage, errorOf(null), true);
  }

  private void collect(Buffer chunk) {
    lastChunkNanos = System.nanoTime();
    bytesDown += chunk.length();
    if (whole.length() + chunk.length() > MAX_ANSWER_BYTES) {
      ProviderClient.abort(answer.request());
      failed(new IOException("answer larger than " + MAX_ANSWER_BYTES + " bytes"));
      return;
    }
    whole.appendBuffer(chunk);
  }

  private void answerEnded() {
    if (outcome.future().isComplete()) {
      return;
    }
    byte[] bytes = whole.getBytes();
    Usage usage;
    try {
      usage = api.usage(ModelEndpoint.JSON.readTree(bytes));
    } catch (IOException | RuntimeException e) {
      usage = Usage.NONE;
    }
    claim.settle(usage);
    byte[] redacted = KeyRedactor.redactAll(endpoint.key(), bytes);
    response.putHeader("content-type", contentType());
    response.end(Buffer.buffer(redacted));
    finish(usage, errorOf(bytes), false);
  }

  private String contentType() {
    String type = answer.getHeader("content-type");
    return type == null ? "application/json" : type;
  }

  /** The provider broke the connection or went silent during its answer. */
  private void failed(Throwable cause) {
    if (outcome.future().isComplete()) {
      return;
    }
    boolean silent = cause instanceof TimeoutException;
    String type = silent ? "upstream_timeout" : "upstream_dropped";
    String message = ProviderFailures.duringAnswer(silent, timeoutSeconds());
    if (whole != null || !response.headWritten()) {
      // Nothing reached the agent yet: it gets the endpoint's own error instead.
      endpoint.vertx().cancelTimer(silenceTimer);
      Usage counted = claim.settle(Usage.NONE);
      outcome.fail(
          new UpstreamFailure(new Refusal(silent ? 504 : 502, type, message), bytesDown, counted));
      return;
    }
    Usage usage = tally.estimate();
    claim.settle(usage);
    byte[] error = api.errorEventBytes(type, message);
    end(Buffer.buffer(scanner.midEvent() ? "\n\n" : "").appendBytes(error).getBytes());
    finish(usage, type + ": " + message, true);
  }

  /** The request never got an answer head: refused by the caller with the endpoint's error. */
  private void unanswered(Throwable cause) {
    Usage counted = claim.settle(Usage.NONE);
    Refusal refusal =
        ProviderFailures.beforeAnswer(cause, abandoned, request != null, timeoutSeconds());
    outcome.fail(new UpstreamFailure(refusal, 0, counted));
  }

  private String errorOf(byte[] answered) {
    return ProviderFailures.errorOf(answer.statusCode(), answered);
  }

  private long timeoutSeconds() {
    return endpoint.upstream().config().timeout().toSeconds();
  }

  private void finish(Usage usage, String error, boolean streamed) {
    if (outcome.future().isComplete()) {
      return;
    }
    endpoint.vertx().cancelTimer(silenceTimer);
    // The record says what the meter counted, even when the usage was settled earlier.
    Usage counted = claim.settle(usage);
    outcome.complete(
        new ModelEndpoint.Outcome(
            answer.statusCode(), counted, error, true, true, body.length(), bytesDown, streamed));
  }
}
