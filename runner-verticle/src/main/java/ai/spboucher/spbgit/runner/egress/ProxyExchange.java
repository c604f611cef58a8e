package ai.spboucher.spbgit.runner.egress;

import ai.spboucher.spbgit.runner.sockets.HttpRelay;
import ai.spboucher.spbgit.runner.sockets.JobSocket;
import ai.spboucher.spbgit.runner.sockets.Refusal;
import ai.spboucher.spbgit.runner.sockets.StrictRequestDecoder;
import ai.spboucher.spbgit.runner.vertx.NettyChannels;
import io.netty.channel.ConnectTimeoutException;
import io.vertx.core.Future;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.HttpVersion;
import io.vertx.core.http.RequestOptions;
import io.vertx.core.net.NetSocket;
import io.vertx.core.net.SocketAddress;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * One request to the {@link EgressProxy}: its target checked against the policy, resolved by the
 * runner (the sandbox has no DNS) and connected to, then a tunnel ({@code CONNECT}) or the one
 * plain-HTTP request relayed, then recorded. The request target is checked strictly: {@code CONNECT
 * host:port}, or an {@code http://} absolute URI without user info or fragment; origin form and
 * other schemes are refused.
 *
 * <p>Threading: every method runs on the event loop of the job's connection, except the name
 * resolution, which runs on a worker and comes back to it.
 */
final class ProxyExchange {

  /**
   * Request headers about the job's connection to the proxy, or replaced: never sent to the target.
   */
  private static final Set<String> NOT_FORWARDED =
      Set.of(
          "host",
          "proxy-connection",
          "proxy-authorization",
          "connection",
          "keep-alive",
          "transfer-encoding",
          "expect",
          "te",
          "trailer",
          "upgrade");

  private final EgressProxy proxy;
  private final HttpServerRequest request;
  private final EgressAttempt attempt;
  private HostPort target;
  private String authority;
  private String path;
  private long bytesUp;
  private long bytesDown;
  private int directionsEnded;
  private NetSocket jobSocket;
  private NetSocket targetSocket;

  /** The relay of a plain-HTTP request; null for a tunnel. */
  private HttpRelay plain;

  private ProxyExchange(EgressProxy proxy, HttpServerRequest request) {
    this.proxy = proxy;
    this.request = request;
    this.attempt = new EgressAttempt(request.method().name());
  }

  /** Serves {@code request}; called on its event loop with the head just parsed. */
  static void serve(EgressProxy proxy, HttpServerRequest request) {
    new ProxyExchange(proxy, request).start();
  }

  private void start() {
    request.pause();
    try {
      readTarget();
    } catch (Refusal refusal) {
      // Nothing was asked for: no record.
      answer(refusal);
      return;
    }
    if (!proxy.policy().admits(target)) {
      attempt.fail("not on the allow-list");
      refuse(new Refusal(403, "forbidden", "egress to " + target + " is not allowed for this job"));
      return;
    }
    JobSocket.whenClosed(request.connection(), this::closeAll);
    resolve()
        .onSuccess(
            addresses -> {
              attempt.allow();
              connect(
                  addresses,
                  0,
                  System.nanoTime() + proxy.settings().connectTimeout().toNanos(),
                  null);
            })
        .onFailure(this::unresolved);
  }

  private void readTarget() throws Refusal {
    String uri = request.uri();
    if (request.method().name().equals("CONNECT")) {
      target = parse(uri, -1);
      return;
    }
    if (uri.startsWith("/") || uri.equals("*")) {
      throw new Refusal(
          400, "bad_request", "this is a proxy: send the absolute URI (http://host:port/path)");
    }
    if (!uri.regionMatches(true, 0, "http://", 0, 7)) {
      throw new Refusal(
          400, "bad_request", "only http:// URIs are proxied; use CONNECT for anything else");
    }
    if (uri.indexOf('#') >= 0) {
      throw new Refusal(400, "bad_request", "a request target has no fragment");
    }
    String rest = uri.substring(7);
    int end = 0;
    while (end < rest.length() && rest.charAt(end) != '/' && rest.charAt(end) != '?') {
      end++;
    }
    authority = rest.substring(0, end);
    if (authority.indexOf('@') >= 0) {
      throw new Refusal(400, "bad_request", "user info in the request target is not accepted");
    }
    target = parse(authority, 80);
    String rawPath = rest.substring(end);
    path = rawPath.isEmpty() ? "/" : rawPath.startsWith("?") ? "/" + rawPath : rawPath;
  }

  private static HostPort parse(String text, int defaultPort) throws Refusal {
    try {
      return HostPort.parse(text, defaultPort);
    } catch (IllegalArgumentException e) {
      throw new Refusal(400, "bad_request", "bad target host:port: " + e.getMessage());
    }
  }

  /** The target's usable addresses; a name is resolved on a worker, since resolution blocks. */
  private Future<List<InetAddress>> resolve() {
    if (target.isIpLiteral()) {
      try {
        return Future.succeededFuture(List.of(target.literalAddress()));
      } catch (UnknownHostException e) {
        return Future.failedFuture(
            new IllegalStateException("validated literal did not parse: " + target, e));
      }
    }
    boolean refuseLocal = proxy.settings().refuseLocalResolutions();
    return proxy
        .vertx()
        .executeBlocking(
            () -> {
              List<InetAddress> usable = new ArrayList<>();
              try {
                for (InetAddress address : InetAddress.getAllByName(target.host())) {
                  if (!refuseLocal || !isLocal(address)) {
                    usable.add(address);
                  }
                }
              } catch (UnknownHostException e) {
                throw new Refusal(502, "unknown_host", "cannot resolve " + target.host());
              }
              if (usable.isEmpty()) {
                throw new Refusal(
                    403,
                    "local_only",
                    "egress to "
                        + target
                        + " is not allowed for this job (resolves only"
                        + " to local addresses)");
              }
              return usable;
            },
            false);
  }

  private void unresolved(Throwable e) {
    if (e instanceof Refusal refusal && refusal.type().equals("unknown_host")) {
      // Listed, so let through as far as the runner could take it.
      attempt.allow();
      attempt.fail("unknown host");
      refuse(refusal);
    } else if (e instanceof Refusal refusal) {
      attempt.fail("resolves only to local addresses");
      refuse(refusal);
    } else {
      attempt.fail("proxy error: " + e);
      refuse(new Refusal(500, "proxy_error", "proxy error"));
    }
  }

  /** Tries the addresses in turn until one answers or the connect timeout has passed. */
  private void connect(List<InetAddress> addresses, int next, long deadline, Throwable last) {
    if (next == addresses.size() || System.nanoTime() >= deadline) {
      boolean timedOut = last == null || last instanceof ConnectTimeoutException;
      attempt.fail(timedOut ? "connect timed out" : "cannot connect: " + last.getMessage());
      refuse(
          new Refusal(
              timedOut ? 504 : 502,
              "upstream",
              "egress to " + target + " failed: " + attempt.failure()));
      return;
    }
    SocketAddress address =
        SocketAddress.inetSocketAddress(target.port(), addresses.get(next).getHostAddress());
    Future<?> connected =
        request.method().name().equals("CONNECT")
            ? proxy.tcp().connect(address).onSuccess(this::tunnel)
            : proxy
                .http(request.version())
                .request(upstreamRequest(address))
                .onSuccess(up -> plain.relay(up));
    connected.onFailure(e -> connect(addresses, next + 1, deadline, e));
  }

  private void tunnel(NetSocket upstream) {
    targetSocket = upstream;
    proxy.track(upstream);
    NettyChannels.allowHalfClosure(upstream);
    StrictRequestDecoder decoder = JobSocket.decoderOf(request.connection());
    request
        .toNetSocket()
        .onSuccess(
            job -> {
              jobSocket = job;
              proxy.track(job);
              Buffer early = JobSocket.tunnelData(decoder);
              count(early, true);
              upstream.write(early);
              relay(job, upstream, true);
              relay(upstream, job, false);
              request.resume();
            })
        .onFailure(
            e -> {
              attempt.fail("proxy error: " + e.getMessage());
              closeAll();
            });
  }

  /**
   * Copies {@code from} to {@code to} with back-pressure. End of stream on one side is passed on as
   * a half-close of the other, so a request/response exchange completes; once both directions
   * ended, or on an error, both sides are closed.
   */
  private void relay(NetSocket from, NetSocket to, boolean up) {
    HttpRelay.pump(from, to, chunk -> count(chunk, up));
    NettyChannels.onHalfClose(
        from,
        () ->
            to.write(Buffer.buffer())
                .onComplete(
                    flushed -> {
                      NettyChannels.shutdownOutput(to);
                      if (++directionsEnded == 2) {
                        closeAll();
                      }
                    }));
    from.exceptionHandler(e -> closeAll());
    from.closeHandler(v -> closeAll());
  }

  /**
   * The plain-HTTP request as the target gets it: origin form, its Host, without the proxy's
   * headers.
   */
  private RequestOptions upstreamRequest(SocketAddress address) {
    RequestOptions options =
        new RequestOptions()
            .setMethod(request.method())
            .setServer(address)
            .setHost(target.host())
            .setPort(target.port())
            .setURI(path)
            .putHeader("Host", authority);
    // Headers the job's Connection header names are about its hop to the proxy too (RFC 9110,
    // 7.6.1).
    Set<String> nominated = new HashSet<>();
    request
        .headers()
        .getAll("Connection")
        .forEach(
            value ->
                Arrays.stream(value.split(","))
                    .map(token -> token.strip().toLowerCase(Locale.ROOT))
                    .forEach(nominated::add));
    request
        .headers()
        .forEach(
            (name, value) -> {
              String lower = name.toLowerCase(Locale.ROOT);
              if (!NOT_FORWARDED.contains(lower) && !nominated.contains(lower)) {
                options.addHeader(name, value);
              }
            });
    String version = request.version() == HttpVersion.HTTP_1_0 ? "HTTP/1.0" : "HTTP/1.1";
    plain = new HttpRelay(request, this::finish);
    plain.countHead(request.method().name() + " " + path + " " + version, options.getHeaders());
    return options;
  }

  private void count(Buffer chunk, boolean up) {
    if (up) {
      bytesUp += chunk.length();
    } else {
      bytesDown += chunk.length();
    }
  }

  /** Answers a refusal of a named target, and records the attempt. */
  private void refuse(Refusal refusal) {
    answer(refusal);
    finish();
  }

  private void answer(Refusal refusal) {
    HttpRelay.refuse(request, JobSocket.Answers.PLAIN_TEXT, refusal);
  }

  private void closeAll() {
    if (jobSocket != null) {
      jobSocket.close();
    } else {
      request.connection().close();
    }
    if (targetSocket != null) {
      targetSocket.close();
    }
    finish();
  }

  private void finish() {
    long up = plain == null ? bytesUp : plain.bytesUp();
    long down = plain == null ? bytesDown : plain.bytesDown();
    attempt.record(target.host(), target.port(), up, down, proxy.recorder()::record);
  }

  private static boolean isLocal(InetAddress address) {
    return address.isLoopbackAddress()
        || address.isLinkLocalAddress()
        || address.isAnyLocalAddress()
        || address.isMulticastAddress();
  }
}
