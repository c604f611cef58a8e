package ai.spboucher.spbgit.runner.sockets;

import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.MultiMap;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClientRequest;
import io.vertx.core.http.HttpClientResponse;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.core.http.HttpVersion;
import io.vertx.core.streams.ReadStream;
import io.vertx.core.streams.WriteStream;
import java.util.Locale;
import java.util.Set;

/**
 * One job request relayed to an upstream server (the git relay's gateway, the egress proxy's
 * plain-HTTP target): the job's body streamed up, the answer's status, headers and body streamed
 * back, both with back-pressure and counted, then the job's connection closed. {@code Expect:
 * 100-continue} is answered to the job here and not passed on. Hop-by-hop headers of the answer are
 * replaced by the job socket's own framing.
 *
 * <p>Threading: created and used on the event loop of the job's connection; the upstream request
 * must be made from it, so that its callbacks run there too.
 */
public final class HttpRelay {

  private static final Set<String> HOP_BY_HOP =
      Set.of(
          "connection",
          "keep-alive",
          "transfer-encoding",
          "proxy-connection",
          "upgrade",
          "te",
          "trailer");

  private final HttpServerRequest request;
  private final Runnable ended;
  private long bytesUp;
  private long bytesDown;
  private boolean done;

  /**
   * @param ended called once when the exchange is over, relayed completely or cut (by either side);
   *     once the upstream was reached, either counts as reaching it, as for a tunnel
   */
  public HttpRelay(HttpServerRequest request, Runnable ended) {
    this.request = request;
    this.ended = ended;
  }

  /** Bytes sent upstream: the head as rendered (see {@link #countHead}) and the body. */
  public long bytesUp() {
    return bytesUp;
  }

  /** Bytes answered to the job: the head as rendered and the body. */
  public long bytesDown() {
    return bytesDown;
  }

  /**
   * Counts the request head sent upstream, as rendered: its first line, its header lines, the
   * {@code Connection: close} the client adds, and the blank line.
   */
  public void countHead(String requestLine, MultiMap headers) {
    bytesUp += headBytes(requestLine, headers) + "Connection: close\r\n".length();
  }

  /**
   * Streams the job's body to {@code upstream}, then its answer back; the request must be paused.
   */
  public void relay(HttpClientRequest upstream) {
    if (request.getHeader("content-length") == null
        && request.getHeader("transfer-encoding") != null) {
      upstream.setChunked(true);
    }
    upstream.exceptionHandler(e -> cut());
    upstream.response().onSuccess(this::answer).onFailure(e -> cut());
    JobSocket.whenClosed(
        request.connection(),
        () -> {
          if (!done) {
            upstream.reset();
            end();
          }
        });
    if ("100-continue".equalsIgnoreCase(request.getHeader("expect"))) {
      request.response().writeContinue();
    }
    stream(request, upstream, true);
    request.resume();
  }

  /**
   * Answers {@code refusal} itself and closes the connection; the future completes once it is
   * closed.
   */
  public static Future<Void> refuse(
      HttpServerRequest request, JobSocket.Answers answers, Refusal refusal) {
    return request
        .response()
        .setStatusCode(refusal.status())
        .putHeader("Content-Type", answers.contentType())
        .putHeader("Connection", "close")
        .end(Buffer.buffer(answers.body(refusal)))
        .eventually(() -> request.connection().close());
  }

  private void answer(HttpClientResponse upstream) {
    HttpServerResponse response = request.response();
    response.setStatusCode(upstream.statusCode()).setStatusMessage(upstream.statusMessage());
    upstream
        .headers()
        .forEach(
            (name, value) -> {
              if (!HOP_BY_HOP.contains(name.toLowerCase(Locale.ROOT))) {
                response.headers().add(name, value);
              }
            });
    if (upstream.getHeader("content-length") == null) {
      response.setChunked(true);
    }
    response.putHeader("Connection", "close");
    String version = request.version() == HttpVersion.HTTP_1_0 ? "HTTP/1.0" : "HTTP/1.1";
    bytesDown +=
        headBytes(
            version + " " + upstream.statusCode() + " " + upstream.statusMessage(),
            upstream.headers());
    upstream.exceptionHandler(e -> cut());
    stream(upstream, response, false);
  }

  private void stream(ReadStream<Buffer> from, WriteStream<Buffer> to, boolean up) {
    pump(from, to, chunk -> count(chunk, up));
    from.endHandler(
        v ->
            to.end()
                .onComplete(
                    written -> {
                      if (!up) {
                        request.connection().close();
                        end();
                      }
                    }));
  }

  /**
   * Copies {@code from} to {@code to} with back-pressure, handing each chunk to {@code seen} first.
   */
  public static void pump(ReadStream<Buffer> from, WriteStream<Buffer> to, Handler<Buffer> seen) {
    from.handler(
        chunk -> {
          seen.handle(chunk);
          to.write(chunk);
          if (to.writeQueueFull()) {
            from.pause();
            to.drainHandler(v -> from.resume());
          }
        });
  }

  private void count(Buffer chunk, boolean up) {
    if (up) {
      bytesUp += chunk.length();
    } else {
      bytesDown += chunk.length();
    }
  }

  private void cut() {
    request.connection().close();
    end();
  }

  private void end() {
    if (!done) {
      done = true;
      ended.run();
    }
  }

  private static long headBytes(String firstLine, MultiMap headers) {
    long length = firstLine.length() + 4;
    for (var header : headers) {
      length += header.getKey().length() + 2 + header.getValue().length() + 2;
    }
    return length;
  }
}
