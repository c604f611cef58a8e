package ai.spboucher.spbgit.runner.env;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.Predicate;

/**
 * A JDK HTTP server on one address and an ephemeral port that routes every request to one handler
 * and records what it answered. The package servers are built on it.
 *
 * <p>Threading: requests are handled on a small pool of daemon threads (npm fetches in parallel);
 * the handler must be thread-safe, and {@link #requests()} may be read from any thread while
 * requests arrive.
 */
final class RecordingHttpServer implements AutoCloseable {

  /** What a handler returns: status, content type, body and an optional {@code Location}. */
  record Reply(int status, String contentType, byte[] body, String location) {
    Reply(int status, String contentType, byte[] body) {
      this(status, contentType, body, null);
    }

    Reply withLocation(String location) {
      return new Reply(status, contentType, body, location);
    }

    static Reply notFound() {
      return new Reply(404, "text/plain", "not found\n".getBytes(StandardCharsets.UTF_8));
    }
  }

  /**
   * Answers one request; {@code host} is the request's Host header (or the server's own host:port).
   */
  interface Handler {
    Reply answer(String method, String rawPath, String host);
  }

  private final HttpServer server;
  private final ExecutorService pool;
  private final List<ServedRequest> requests = new CopyOnWriteArrayList<>();

  RecordingHttpServer(InetAddress address, String threadName, Handler handler) throws IOException {
    server = HttpServer.create(new InetSocketAddress(address, 0), 50);
    pool =
        Executors.newFixedThreadPool(
            4,
            r -> {
              Thread t = new Thread(r, threadName + "-" + server.getAddress().getPort());
              t.setDaemon(true);
              return t;
            });
    server.setExecutor(pool);
    server.createContext("/", exchange -> serve(exchange, handler));
    server.start();
  }

  private void serve(HttpExchange exchange, Handler handler) throws IOException {
    try (exchange) {
      String method = exchange.getRequestMethod();
      String rawPath = exchange.getRequestURI().getRawPath();
      String host = exchange.getRequestHeaders().getFirst("Host");
      Reply reply;
      try {
        reply = handler.answer(method, rawPath, host != null ? host : hostPort());
      } catch (RuntimeException e) {
        reply = new Reply(500, "text/plain", (e + "\n").getBytes(StandardCharsets.UTF_8));
      }
      requests.add(
          new ServedRequest(
              method, rawPath, exchange.getRemoteAddress().getAddress(), reply.status()));
      exchange.getResponseHeaders().set("Content-Type", reply.contentType());
      if (reply.location() != null) {
        exchange.getResponseHeaders().set("Location", reply.location());
      }
      boolean head = method.equals("HEAD");
      exchange.sendResponseHeaders(
          reply.status(), head ? -1 : reply.body().length == 0 ? -1 : reply.body().length);
      if (!head) {
        try (OutputStream out = exchange.getResponseBody()) {
          out.write(reply.body());
        }
      }
    }
  }

  InetAddress address() {
    return server.getAddress().getAddress();
  }

  int port() {
    return server.getAddress().getPort();
  }

  /** {@code address:port}, as a URL's authority. */
  String hostPort() {
    String host = address().getHostAddress();
    return (address() instanceof Inet6Address ? "[" + host.replaceAll("%.*", "") + "]" : host)
        + ":"
        + port();
  }

  /** Every request answered so far, oldest first. */
  List<ServedRequest> requests() {
    return List.copyOf(requests);
  }

  /** The requests answered so far that match. */
  List<ServedRequest> requests(Predicate<ServedRequest> which) {
    return requests.stream().filter(which).toList();
  }

  @Override
  public void close() {
    server.stop(0);
    pool.shutdownNow();
  }
}
