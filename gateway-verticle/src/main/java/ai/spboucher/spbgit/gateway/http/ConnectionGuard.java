package ai.spboucher.spbgit.gateway.http;

import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpConnection;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.core.http.ServerWebSocket;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Keeps slow and numerous clients from taking the gateway's file descriptors: caps open connections
 * in all and per client address, and closes a connection that takes longer than the head timeout to
 * send a complete request head, counted from its opening or, on a keep-alive connection, from the
 * end of its previous response. Vert.x has no request-head timeout of its own, and its idle timeout
 * alone never fires on a client that trickles one byte of head every few seconds. Upgraded
 * connections (websockets) and requests in progress (long clones and pushes) are never timed by the
 * head timeout; the idle timeout still ends those that stop moving. Websockets accepted through
 * {@link #toWebSocket} are pinged every {@link ConnectionLimits#WEBSOCKET_PING_INTERVAL}, so a
 * viewer of a quiet job outlives the idle timeout; Vert.x reports no close of an upgraded
 * connection, so their slot is given back when the sweep sees the socket closed.
 *
 * <p>A connection over a cap is answered {@code 503 {"error": ...}} if it sends a head within
 * {@link #REFUSAL_GRACE_MS} while few refusals are pending, and closed at once otherwise, so
 * refusing never holds many descriptors.
 *
 * <p>Threading: every method runs on the HTTP server's event loop (the verticle's context): the
 * connection and request handlers and the sweep timer all do.
 */
public final class ConnectionGuard {

  private static final System.Logger LOG = System.getLogger(ConnectionGuard.class.getName());

  /** How long a refused connection may take to send the head its 503 answers. */
  static final long REFUSAL_GRACE_MS = 2_000;

  private static final long REFUSAL_GRACE_NANOS = TimeUnit.MILLISECONDS.toNanos(REFUSAL_GRACE_MS);

  /** Refused connections held for their 503 at once; past this they are closed without one. */
  static final int MAX_PENDING_REFUSALS = 64;

  private final Vertx vertx;
  private final ConnectionLimits limits;
  private final ConnectionCounts counts;
  private final long headTimeoutNanos;
  private final Map<HttpConnection, Tracked> open = new IdentityHashMap<>();
  private int pendingRefusals;
  private boolean warnedAtCap;

  /**
   * One open connection: its requests still being answered, and since when it has been waiting for
   * a head.
   */
  private static final class Tracked {
    final String address;
    final boolean refused;
    final List<HttpServerResponse> inFlight = new ArrayList<>(1);
    long waitingSince;
    boolean upgrading;
    ServerWebSocket socket;
    long lastPing;
    boolean closing;

    Tracked(String address, boolean refused, long now) {
      this.address = address;
      this.refused = refused;
      this.waitingSince = now;
    }
  }

  /**
   * @param cap the connection cap, from {@link ConnectionLimits#capFor}
   */
  public ConnectionGuard(Vertx vertx, ConnectionLimits limits, int cap) {
    this.vertx = vertx;
    this.limits = limits;
    this.counts = new ConnectionCounts(cap, limits.maxConnectionsPerAddress());
    this.headTimeoutNanos = limits.headTimeout().toNanos();
  }

  /**
   * The server options with the idle timeout set, and HTTP/2 over cleartext off: with it on, Vert.x
   * reports a connection only once its first head is complete (to tell h2c from HTTP/1.1), so the
   * guard would never see a slow-loris. Git, browsers and the runner speak HTTP/1.1 to the gateway.
   */
  public HttpServerOptions configure(HttpServerOptions options) {
    return options
        .setIdleTimeout((int) limits.idleTimeout().toSeconds())
        .setIdleTimeoutUnit(TimeUnit.SECONDS)
        .setHttp2ClearTextEnabled(false);
  }

  /**
   * Starts the sweep that closes connections past their head deadline; timers end with the
   * verticle.
   */
  public void start() {
    long period = Math.max(50, Math.min(1_000, limits.headTimeout().toMillis() / 4));
    vertx.setPeriodic(period, id -> sweep(System.nanoTime()));
  }

  /** The server's connection handler: admits or refuses each new connection. */
  public void opened(HttpConnection connection) {
    String address =
        connection.remoteAddress() == null || connection.remoteAddress().hostAddress() == null
            ? "unknown"
            : connection.remoteAddress().hostAddress();
    ConnectionCounts.Admission admission = counts.admit(address);
    if (admission != ConnectionCounts.Admission.ADMITTED) {
      warnOnce(admission, address);
      if (pendingRefusals >= MAX_PENDING_REFUSALS) {
        connection.close();
        return;
      }
      pendingRefusals++;
    }
    Tracked tracked =
        new Tracked(address, admission != ConnectionCounts.Admission.ADMITTED, System.nanoTime());
    open.put(connection, tracked);
    connection.closeHandler(v -> closed(connection));
  }

  /**
   * Wraps the server's request handler: refused connections get their 503, the others go on to
   * {@code next}.
   */
  public Handler<HttpServerRequest> admitting(Handler<HttpServerRequest> next) {
    return request -> {
      Tracked tracked = open.get(request.connection());
      if (tracked != null && tracked.refused) {
        refuse(request);
        return;
      }
      if (tracked != null) {
        tracked.inFlight.add(request.response());
      }
      next.handle(request);
    };
  }

  /**
   * Accepts the request's websocket handshake; the guard then pings the socket and counts its
   * connection until it closes. Every websocket the gateway accepts goes through here.
   */
  public Future<ServerWebSocket> toWebSocket(HttpServerRequest request) {
    Tracked tracked = open.get(request.connection());
    if (tracked == null) {
      return request.toWebSocket();
    }
    tracked.upgrading = true;
    return request
        .toWebSocket()
        .onSuccess(
            socket -> {
              tracked.socket = socket;
              tracked.lastPing = System.nanoTime();
            })
        .onFailure(e -> tracked.upgrading = false);
  }

  private void refuse(HttpServerRequest request) {
    HttpConnection connection = request.connection();
    request
        .response()
        .setStatusCode(503)
        .putHeader("Content-Type", "application/json")
        .putHeader("Connection", "close")
        .putHeader("Retry-After", "5")
        .end(
            new JsonObject()
                .put("error", "the gateway has too many open connections; try again later")
                .encode())
        .onComplete(ar -> connection.close());
  }

  private void closed(HttpConnection connection) {
    Tracked tracked = open.remove(connection);
    if (tracked == null) {
      return;
    }
    if (tracked.refused) {
      pendingRefusals--;
    } else {
      counts.release(tracked.address);
    }
  }

  /**
   * Closes every connection whose head is overdue (a response that ended restarts its connection's
   * clock), pings websockets, and gives back the slots of those that closed.
   */
  void sweep(long now) {
    List<HttpConnection> overdue = new ArrayList<>();
    List<HttpConnection> released = new ArrayList<>();
    long pingNanos = ConnectionLimits.WEBSOCKET_PING_INTERVAL.toNanos();
    open.forEach(
        (connection, tracked) -> {
          if (tracked.socket != null) {
            if (tracked.socket.isClosed()) {
              released.add(connection);
            } else if (now - tracked.lastPing > pingNanos) {
              tracked.lastPing = now;
              tracked.socket.writePing(Buffer.buffer());
            }
          } else if (!tracked.inFlight.isEmpty()) {
            if (!tracked.upgrading
                && tracked.inFlight.stream().anyMatch(r -> r.ended() && r.getStatusCode() == 101)) {
              // Upgraded past toWebSocket: its close is invisible here, so it stops counting rather
              // than leak a slot.
              released.add(connection);
            } else if (tracked.inFlight.removeIf(HttpServerResponse::ended)
                && tracked.inFlight.isEmpty()) {
              tracked.waitingSince = now;
            }
          } else if (headOverdue(tracked, now)) {
            tracked.closing = true;
            overdue.add(connection);
          }
        });
    released.forEach(this::closed);
    overdue.forEach(HttpConnection::close);
  }

  private boolean headOverdue(Tracked tracked, long now) {
    long budget = tracked.refused ? REFUSAL_GRACE_NANOS : headTimeoutNanos;
    return !tracked.closing && !tracked.upgrading && now - tracked.waitingSince > budget;
  }

  private void warnOnce(ConnectionCounts.Admission admission, String address) {
    if (!warnedAtCap) {
      warnedAtCap = true;
      String cap =
          admission == ConnectionCounts.Admission.OVER_TOTAL
              ? counts.total() + " connections are open (SPB_MAX_CONNECTIONS)"
              : counts.from(address)
                  + " connections are open from "
                  + address
                  + " (SPB_MAX_CONNECTIONS_PER_ADDRESS)";
      LOG.log(
          System.Logger.Level.WARNING,
          "refusing connections: " + cap + "; further refusals are not logged");
    }
  }
}
