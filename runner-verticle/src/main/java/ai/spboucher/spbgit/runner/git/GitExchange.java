package ai.spboucher.spbgit.runner.git;

import ai.spboucher.spbgit.runner.egress.EgressAttempt;
import ai.spboucher.spbgit.runner.sockets.HttpRelay;
import ai.spboucher.spbgit.runner.sockets.JobSocket;
import ai.spboucher.spbgit.runner.sockets.Refusal;
import io.netty.channel.ConnectTimeoutException;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.RequestOptions;
import java.util.Locale;

/**
 * One request to a {@link GitRelay}: checked against its {@link GitRoute}, then sent to the gateway
 * with the job token, its body and the gateway's answer streamed through ({@link HttpRelay}), then
 * recorded.
 *
 * <p>Threading: every method runs on the event loop of the job's connection; the gateway request is
 * made from it, so its callbacks run there too.
 */
final class GitExchange {

  private final GitRelay relay;
  private final HttpServerRequest request;
  private final HttpRelay stream;
  private final EgressAttempt attempt;

  private GitExchange(GitRelay relay, HttpServerRequest request) {
    this.relay = relay;
    this.request = request;
    this.stream = new HttpRelay(request, this::finish);
    this.attempt = new EgressAttempt(request.method().name());
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
      attempt.fail("not a git request for this job's repository: " + method + " " + target);
      refuse(
          new Refusal(
              403,
              "forbidden",
              "the git relay serves only smart HTTP of "
                  + relay.route().repoPath()
                  + ", not "
                  + method
                  + " "
                  + target));
      return;
    }
    attempt.allow();
    relay
        .gateway()
        .request(upstreamRequest(target))
        .onSuccess(stream::relay)
        .onFailure(this::unreachable);
  }

  /** The request as the gateway gets it: its host, the token, and only the headers git needs. */
  private RequestOptions upstreamRequest(String target) {
    GitRelay.Origin origin = relay.origin();
    RequestOptions options =
        new RequestOptions()
            .setMethod(request.method())
            .setHost(origin.host())
            .setPort(origin.port())
            .setURI(target)
            .putHeader("Host", origin.authority())
            .putHeader("Authorization", relay.authorization());
    request
        .headers()
        .forEach(
            (name, value) -> {
              if (GitRelay.FORWARDED_HEADERS.contains(name.toLowerCase(Locale.ROOT))) {
                options.addHeader(name, value);
              }
            });
    String length = request.getHeader("content-length");
    if (length != null) {
      options.putHeader("Content-Length", length);
    }
    stream.countHead(request.method().name() + " " + target + " HTTP/1.1", options.getHeaders());
    return options;
  }

  private void unreachable(Throwable e) {
    boolean timedOut = e instanceof ConnectTimeoutException;
    attempt.fail(timedOut ? "connect timed out" : "cannot reach the gateway: " + e);
    refuse(
        new Refusal(
            timedOut ? 504 : 502,
            "upstream",
            "the git relay cannot reach the gateway at " + relay.origin().authority()));
  }

  private void refuse(Refusal refusal) {
    HttpRelay.refuse(request, JobSocket.Answers.PLAIN_TEXT, refusal).onComplete(closed -> finish());
  }

  private void finish() {
    GitRelay.Origin origin = relay.origin();
    attempt.record(
        origin.host(), origin.port(), stream.bytesUp(), stream.bytesDown(), relay::record);
  }
}
