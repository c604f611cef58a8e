package ai.spboucher.spbgit.runner.git;

import ai.spboucher.spbgit.runner.egress.EgressRecord;
import ai.spboucher.spbgit.runner.sockets.JobSocket;
import ai.spboucher.spbgit.runner.sockets.Refusal;
import io.netty.channel.ConnectTimeoutException;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClientRequest;
import io.vertx.core.http.HttpClientResponse;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.core.http.RequestOptions;
import io.vertx.core.streams.ReadStream;
import io.vertx.core.streams.WriteStream;
import java.time.Duration;
import java.time.Instant;
import java.util.Locale;
import java.util.Set;

/**
 * One request to a {@link GitRelay}: checked against its {@link GitRoute}, then sent to the gateway with the job
 * token, its body and the gateway's answer streamed through (with back-pressure), then recorded.
 *
 * <p>Threading: every method runs on the event loop of the job's connection; the gateway request is made from
 * it, so its callbacks run there too.
 */
final class GitExchange {

  /** Response headers about the gateway's connection, not the answer; the relay's own framing replaces them. */
  private static final Set<String> HOP_BY_HOP = Set.of("connection", "keep-alive", "transfer-encoding",
      "proxy-connection", "upgrade", "te", "trailer");

  private final GitRelay relay;
  private final HttpServerRequest request;
  private final Instant startedAt = Instant.now();
  private final long startNanos = System.nanoTime();
  private long bytesUp;
  private long bytesDown;
  private boolean allowed;
  private String failure;
  private boolean recorded;

  private GitExchange(GitRelay relay, HttpServerRequest request) {
    this.relay = relay;
    this.request = request;
  }

  /** Serves {@code request}; called on its event loop with the head just parsed. */
  static void serve(GitRelay relay, HttpServerRequest request) {
    new GitExchange(relay, request).start();
  }

  private void start() {
    request.pause();
    String method = request.method().name();
    String target = request.uri();
    // Origin form only: an absolute-form target names a host of its own choosing.
    if (!target.startsWith("/") || !relay.route().admits(method, request.path(), request.query())) {
      failure = "not a git request for this job's repository: " + method + " " + target;
      refuse(new Refusal(403, "forbidden", "the git relay serves only smart HTTP of " + relay.route().repoPath()
          + ", not " + method + " " + target));
      return;
    }
    allowed = true;
    JobSocket.whenClosed(request.connection(), this::finish);
    relay.gateway().request(upstreamRequest(target))
        .onSuccess(this::send)
        .onFailure(this::unreachable);
  }

  /** The request as the gateway gets it: its host, the token, and only the headers git needs. */
  private RequestOptions upstreamRequest(String target) {
    GitRelay.Origin origin = relay.origin();
    RequestOptions options = new RequestOptions().setMethod(request.method()).setHost(origin.host())
        .setPort(origin.port()).setURI(target)
        .putHeader("Host", origin.authority())
        .putHeader("Authorization", relay.authorization());
    request.headers().forEach((name, value) -> {
      if (GitRelay.FORWARDED_HEADERS.contains(name.toLowerCase(Locale.ROOT))) {
        options.addHeader(name, value);
      }
    });
    String length = request.getHeader("content-length");
    if (length != null) {
      options.putHeader("Content-Length", length);
    }
    bytesUp += headBytes(method() + " " + target + " HTTP/1.1", options.getHeaders());
    return options;
  }

  private void send(HttpClientRequest upstream) {
    if (request.getHeader("content-length") == null && request.getHeader("transfer-encoding") != null) {
      upstream.setChunked(true);
    }
    upstream.response().onSuccess(this::answer).onFailure(e -> cut("the gateway's answer failed: " + e));
    JobSocket.whenClosed(request.connection(), () -> {
      upstream.reset();
      finish();
    });
    if ("100-continue".equalsIgnoreCase(request.getHeader("expect"))) {
      // Answered here: the relay streams the body anyway, the gateway need not be asked.
      request.response().writeContinue();
    }
    stream(request, upstream, true);
    request.resume();
  }

  private void answer(HttpClientResponse upstream) {
    HttpServerResponse response = request.response();
    response.setStatusCode(upstream.statusCode()).setStatusMessage(upstream.statusMessage());
    upstream.headers().forEach((name, value) -> {
      if (!HOP_BY_HOP.contains(name.toLowerCase(Locale.ROOT))) {
        response.headers().add(name, value);
      }
    });
    if (upstream.getHeader("content-length") == null) {
      response.setChunked(true);
    }
    response.putHeader("Connection", "close");
    bytesDown += headBytes("HTTP/1.1 " + upstream.statusCode() + " " + upstream.statusMessage(),
        response.headers());
    upstream.exceptionHandler(e -> cut("the gateway's answer broke off: " + e.getMessage()));
    stream(upstream, response, false);
  }

  /** Copies {@code from} to {@code to}, pausing {@code from} while {@code to} is full, counting the bytes. */
  private void stream(ReadStream<Buffer> from, WriteStream<Buffer> to, boolean up) {
    from.handler(chunk -> {
      if (up) {
        bytesUp += chunk.length();
      } else {
        bytesDown += chunk.length();
      }
      to.write(chunk);
      if (to.writeQueueFull()) {
        from.pause();
        to.drainHandler(v -> from.resume());
      }
    });
    from.endHandler(v -> to.end().onComplete(done -> {
      if (!up) {
        request.connection().close();
        finish();
      }
    }));
  }

  private void unreachable(Throwable e) {
    boolean timedOut = e instanceof ConnectTimeoutException;
    failure = timedOut ? "connect timed out" : "cannot reach the gateway: " + e;
    refuse(new Refusal(timedOut ? 504 : 502, "upstream", "the git relay cannot reach the gateway at "
        + relay.origin().authority()));
  }

  private void refuse(Refusal refusal) {
    byte[] body = GitRelay.ANSWERS.body(refusal);
    request.response().setStatusCode(refusal.status())
        .putHeader("Content-Type", GitRelay.ANSWERS.contentType())
        .putHeader("Connection", "close")
        .end(Buffer.buffer(body))
        .onComplete(done -> {
          request.connection().close();
          finish();
        });
  }

  private void cut(String why) {
    failure = failure == null ? why : failure;
    request.connection().close();
    finish();
  }

  private void finish() {
    if (recorded) {
      return;
    }
    recorded = true;
    GitRelay.Origin origin = relay.origin();
    relay.record(new EgressRecord(startedAt, method(), origin.host(), origin.port(), allowed, bytesUp, bytesDown,
        Duration.ofNanos(System.nanoTime() - startNanos), failure));
  }

  private String method() {
    return request.method().name();
  }

  /** The size of a head as rendered on the wire: its first line, its header lines and the blank line. */
  private static long headBytes(String firstLine, io.vertx.core.MultiMap headers) {
    long length = firstLine.length() + 4;
    for (var header : headers) {
      length += header.getKey().length() + 2 + header.getValue().length() + 2;
    }
    return length;
  }
}
