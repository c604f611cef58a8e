package ai.spboucher.spbgit.runner.sockets;

import ai.spboucher.spbgit.runner.vertx.NettyChannels;
import io.vertx.core.Handler;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpConnection;
import io.vertx.core.http.HttpServerRequest;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The open connections of one {@link JobSocket} and the clock each one's next request head runs
 * against: a head not complete within {@link JobSocket.Limits#headTimeout()} of the connection's
 * opening gets the socket's 408; on a socket that keeps connections alive, a connection idle that
 * long after its last answer is closed quietly, and one whose client closed its side is closed as
 * soon as it has no answer left to write.
 *
 * <p>Threading: each connection's calls come on its event loop; the maps are concurrent because the
 * socket's connections live on several loops and {@link #closeAll} comes from any thread.
 */
final class SocketConnections {

  private final Vertx vertx;
  private final JobSocket.Limits limits;

  /**
   * Open connections, each with the timer of its request head (-1 while a request is served, or
   * once the head came on a socket without keep-alive).
   */
  private final Map<HttpConnection, Long> open = new ConcurrentHashMap<>();

  /** Requests being answered, per connection kept alive. */
  private final Map<HttpConnection, Integer> serving = new ConcurrentHashMap<>();

  /** Connections kept alive whose client closed its side: no request comes on them any more. */
  private final Set<HttpConnection> inputEnded = ConcurrentHashMap.newKeySet();

  SocketConnections(Vertx vertx, JobSocket.Limits limits) {
    this.vertx = vertx;
    this.limits = limits;
  }

  int size() {
    return open.size();
  }

  /** Whether the socket holds {@link JobSocket.Limits#maxConnections()} open already. */
  boolean full() {
    return open.size() >= limits.maxConnections();
  }

  /**
   * Counts a connection just admitted and starts the clock of its first request head; {@code late}
   * runs, once, when the head does not come in time.
   */
  void track(HttpConnection connection, Runnable late) {
    long timer =
        vertx.setTimer(
            limits.headTimeout().toMillis(),
            id -> {
              if (open.replace(connection, id, -1L)) {
                late.run();
              }
            });
    open.put(connection, timer);
    // The channel's, not the connection's: a connection turned into a tunnel no longer reports its
    // close.
    NettyChannels.whenClosed(
        connection,
        () -> {
          serving.remove(connection);
          inputEnded.remove(connection);
          Long pending = open.remove(connection);
          if (pending != null && pending >= 0) {
            vertx.cancelTimer(pending);
          }
        });
  }

  /**
   * Stops the connection's head timer; false when a request had come on it already (and, on a
   * socket that keeps connections alive, is still being answered).
   */
  boolean headArrived(HttpConnection connection) {
    Long timer = open.replace(connection, -1L);
    if (timer != null && timer >= 0) {
      vertx.cancelTimer(timer);
      return true;
    }
    return false;
  }

  /**
   * Hands a request on a connection kept alive to {@code requests}; once its answer and every other
   * one on the connection ended, the next head's clock starts, or the connection is closed when its
   * client closed its side.
   */
  void serveKeptAlive(HttpServerRequest request, Handler<HttpServerRequest> requests) {
    HttpConnection connection = request.connection();
    headArrived(connection);
    serving.merge(connection, 1, Integer::sum);
    request
        .response()
        .endHandler(
            v -> {
              Integer left = serving.computeIfPresent(connection, (c, n) -> n - 1);
              if (left != null && left == 0) {
                if (inputEnded.contains(connection)) {
                  connection.close();
                } else {
                  awaitNextHead(connection);
                }
              }
            });
    requests.handle(request);
  }

  /**
   * Notes that the client of a connection kept alive closed its side, and closes the connection at
   * once when no answer is being written on it (else {@link #serveKeptAlive} does, after the last).
   */
  void inputEnded(HttpConnection connection) {
    inputEnded.add(connection);
    if (serving.getOrDefault(connection, 0) == 0) {
      // Vert.x's close, which first writes what an earlier answer left queued.
      connection.close();
    }
  }

  void closeAll() {
    open.keySet().forEach(HttpConnection::close);
  }

  /**
   * Once every answer ended on a connection kept alive: the next request head must come within the
   * head timeout, or the connection is closed.
   */
  private void awaitNextHead(HttpConnection connection) {
    long timer =
        vertx.setTimer(
            limits.headTimeout().toMillis(),
            id -> {
              if (open.remove(connection, id)) {
                connection.close();
              }
            });
    if (!open.replace(connection, -1L, timer)) {
      // Closed meanwhile, or the next (pipelined) request came already.
      vertx.cancelTimer(timer);
    }
  }
}
