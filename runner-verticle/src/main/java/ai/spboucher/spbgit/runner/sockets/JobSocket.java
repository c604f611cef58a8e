package ai.spboucher.spbgit.runner.sockets;

import ai.spboucher.spbgit.runner.vertx.NettyChannels;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.handler.codec.TooLongFrameException;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpConnection;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.net.SocketAddress;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.Arrays;
import java.util.Objects;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The server side of one of a job's sockets (the egress proxy, the model endpoint, the git relay):
 * Vert.x's HTTP/1.1 server on a unix domain socket in the job's egress directory, mode 0666 so the
 * container's unprivileged user can connect. Vert.x serves unix sockets on NIO (JDK 16+) and on
 * epoll; the runner prefers epoll, because Netty's NIO unix sockets cannot half-close, so a job
 * that shuts its output after a request would lose the answer there. Vert.x (Netty's codec) parses
 * every request head; this class adds what the sockets share: at most {@code maxConnections} open
 * connections (the next one is answered the busy refusal at once, without waiting for a request,
 * and closed), a head larger than {@code maxHeadBytes} (431) or one that does not parse strictly
 * ({@link StrictRequestDecoder}, 400) refused, a request head not complete within {@code
 * headTimeout} answered 408 and closed, and one request per connection (a pipelined one is never
 * served), unless the socket keeps connections alive ({@link Limits#keepAlive()}): then every
 * request head is checked as strictly, a connection left idle for {@code headTimeout} after an
 * answer is closed (quietly: a client of an idle keep-alive connection expects no answer), and one
 * whose client closed its side is closed as soon as it has no answer left to write: no further
 * request can come on it, and a one-shot client (curl) must not hold one of the few connections
 * until the idle timeout.
 *
 * <p>Threading: {@link #bind} and {@link #close()} block the calling thread (never call them on an
 * event loop); the request handler runs on the server's event loop and must not block. {@link
 * #close()} is idempotent: it stops accepting, closes every open connection and deletes the socket
 * file.
 */
public final class JobSocket implements AutoCloseable {

  /** How a socket renders its own answers: the content type and the body of a refusal. */
  public interface Answers {

    /**
     * The refusal's message as one line of plain text: what curl and git show the job (the egress
     * proxy, the git relay).
     */
    Answers PLAIN_TEXT =
        new Answers() {
          @Override
          public String contentType() {
            return "text/plain; charset=utf-8";
          }

          @Override
          public byte[] body(Refusal refusal) {
            return (refusal.getMessage() + "\n").getBytes(StandardCharsets.UTF_8);
          }
        };

    String contentType();

    byte[] body(Refusal refusal);
  }

  /**
   * The bounds every connection of the socket is held to.
   *
   * @param keepAlive whether a connection may carry many requests, one after the other
   */
  public record Limits(
      int maxConnections, int maxHeadBytes, Duration headTimeout, boolean keepAlive) {

    /** One request per connection. */
    public Limits(int maxConnections, int maxHeadBytes, Duration headTimeout) {
      this(maxConnections, maxHeadBytes, headTimeout, false);
    }

    public Limits {
      if (maxConnections < 1
          || maxHeadBytes < 1
          || headTimeout.isNegative()
          || headTimeout.isZero()) {
        throw new IllegalArgumentException(
            "socket limits must be positive: "
                + maxConnections
                + ", "
                + maxHeadBytes
                + ", "
                + headTimeout);
      }
    }
  }

  private static final System.Logger LOG = System.getLogger(JobSocket.class.getName());
  private static final Duration CLOSE_WAIT = Duration.ofSeconds(5);

  private final Path socketPath;
  private final HttpServer server;

  private final SocketConnections connections;
  private volatile boolean closed;

  private JobSocket(Vertx vertx, Path socketPath, HttpServer server, Limits limits) {
    this.socketPath = socketPath;
    this.server = server;
    this.connections = new SocketConnections(vertx, limits);
  }

  /**
   * Binds {@code socketPath}, which must not exist, with mode 0666, and serves it.
   *
   * @param busy the refusal for a connection beyond {@link Limits#maxConnections}
   * @param requests called on the event loop with each request whose head parsed
   * @param invalid called on the event loop with the refusal given to a request whose head did not
   *     parse or was too large (already answered), for the socket's records
   */
  public static JobSocket bind(
      Vertx vertx,
      Path socketPath,
      Limits limits,
      Answers answers,
      Refusal busy,
      Handler<HttpServerRequest> requests,
      Handler<Refusal> invalid)
      throws IOException {
    Objects.requireNonNull(requests, "requests");
    if (Files.exists(socketPath, LinkOption.NOFOLLOW_LINKS)) {
      throw new IOException("socket path exists already: " + socketPath);
    }
    HttpServerOptions options =
        new HttpServerOptions()
            .setMaxInitialLineLength(limits.maxHeadBytes())
            .setMaxHeaderSize(limits.maxHeadBytes())
            // HTTP/1.1 only: with h2c on, Vert.x reads the first bytes before it makes the
            // connection, so a silent
            // connection would escape the limits.
            .setHttp2ClearTextEnabled(false)
            .setHandle100ContinueAutomatically(false)
            .setCompressionSupported(false)
            .setDecompressionSupported(false);
    HttpServer server = vertx.createHttpServer(options);
    JobSocket socket = new JobSocket(vertx, socketPath, server, limits);
    server
        .connectionHandler(connection -> socket.admit(connection, options, limits, answers, busy))
        .requestHandler(
            request -> {
              if (limits.keepAlive()) {
                socket.connections.serveKeptAlive(request, requests);
              } else if (socket.connections.headArrived(request.connection())) {
                requests.handle(request);
              } else {
                // One request per connection: a pipelined one is never served.
                request.connection().close();
              }
            })
        .invalidRequestHandler(
            request -> {
              socket.connections.headArrived(request.connection());
              Refusal refusal = invalidHead(request, limits);
              answerRaw(request.connection(), answer(answers, refusal));
              invalid.handle(refusal);
            });
    await(
        server.listen(SocketAddress.domainSocketAddress(socketPath.toString())),
        "bind " + socketPath);
    try {
      Files.setPosixFilePermissions(socketPath, PosixFilePermissions.fromString("rw-rw-rw-"));
    } catch (IOException | RuntimeException e) {
      socket.close();
      throw e;
    }
    return socket;
  }

  public Path socketPath() {
    return socketPath;
  }

  /** Connections currently open. */
  public int openConnections() {
    return connections.size();
  }

  public boolean isClosed() {
    return closed;
  }

  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    try {
      connections.closeAll();
      await(server.close(), "close " + socketPath);
    } catch (IOException e) {
      LOG.log(System.Logger.Level.WARNING, "cannot close " + socketPath + ": " + e.getMessage());
    } finally {
      try {
        Files.deleteIfExists(socketPath);
      } catch (IOException e) {
        LOG.log(System.Logger.Level.WARNING, "cannot delete " + socketPath + ": " + e);
      }
    }
  }

  /**
   * Writes a complete answer straight to the connection's socket and closes it. For the answers the
   * socket gives before or instead of a request Vert.x could answer: Vert.x has no response object
   * then.
   */
  public static void answerRaw(HttpConnection connection, byte[] answer) {
    // Past Vert.x's HTTP encoder, which only takes responses to requests it has decoded.
    NettyChannels.writeRawAndClose(connection, answer);
  }

  /**
   * Runs {@code action} on the connection's event loop once its channel is closed. Unlike Vert.x's
   * close handlers this neither fires when the job only half-closes nor goes quiet once the
   * connection became a tunnel.
   *
   * @return stops watching (for a request answered on a connection kept alive)
   */
  public static Runnable whenClosed(HttpConnection connection, Runnable action) {
    return NettyChannels.whenClosed(connection, action);
  }

  /**
   * The bytes the job sent right behind its {@code CONNECT} head, to be sent through the tunnel
   * first; call it once the request became a tunnel ({@code toNetSocket}).
   */
  public static Buffer tunnelData(StrictRequestDecoder decoder) {
    ByteBuf data = decoder.takeTunnelData();
    try {
      return Buffer.buffer(ByteBufUtil.getBytes(data));
    } finally {
      data.release();
    }
  }

  /** The connection's decoder; take it before the request becomes a tunnel, which removes it. */
  public static StrictRequestDecoder decoderOf(HttpConnection connection) {
    return NettyChannels.handlerOf(connection, StrictRequestDecoder.class);
  }

  /** The complete bytes of a refusal, with {@code Connection: close}. */
  public static byte[] answer(Answers answers, Refusal refusal) {
    byte[] body = answers.body(refusal);
    byte[] head =
        ("HTTP/1.1 "
                + refusal.status()
                + " "
                + HttpResponseStatus.valueOf(refusal.status()).reasonPhrase()
                + "\r\nContent-Type: "
                + answers.contentType()
                + "\r\nContent-Length: "
                + body.length
                + "\r\nConnection: close\r\n\r\n")
            .getBytes(StandardCharsets.US_ASCII);
    byte[] all = Arrays.copyOf(head, head.length + body.length);
    System.arraycopy(body, 0, all, head.length, body.length);
    return all;
  }

  private void admit(
      HttpConnection connection,
      HttpServerOptions options,
      Limits limits,
      Answers answers,
      Refusal busy) {
    if (closed || connections.full()) {
      answerRaw(connection, answer(answers, busy));
      return;
    }
    // Vert.x has options for neither; the connection has read nothing yet.
    NettyChannels.replaceDecoder(connection, new StrictRequestDecoder(options, limits.keepAlive()));
    // A job that half-closes after its request still gets the answer (see StrictRequestDecoder).
    NettyChannels.allowHalfClosure(connection);
    if (limits.keepAlive()) {
      // Behind the decoder, which fires the requests it still holds before the event.
      NettyChannels.onHalfClose(connection, () -> connections.inputEnded(connection));
    }
    Refusal late =
        new Refusal(
            408,
            "request_timeout",
            "request head not received within " + limits.headTimeout().toMillis() / 1000.0 + " s");
    connections.track(connection, () -> answerRaw(connection, answer(answers, late)));
  }

  private static Refusal invalidHead(HttpServerRequest request, Limits limits) {
    Throwable cause = request.decoderResult().cause();
    if (cause instanceof TooLongFrameException) {
      return new Refusal(
          431,
          "request_header_too_large",
          "request head larger than " + limits.maxHeadBytes() + " bytes");
    }
    return Refusal.badRequest(
        "malformed request head" + (cause == null ? "" : ": " + cause.getMessage()));
  }

  private static <T> T await(Future<T> future, String what) throws IOException {
    try {
      return future
          .toCompletionStage()
          .toCompletableFuture()
          .get(CLOSE_WAIT.toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("interrupted: " + what, e);
    } catch (ExecutionException e) {
      throw new IOException("cannot " + what + ": " + e.getCause().getMessage(), e.getCause());
    } catch (TimeoutException e) {
      throw new IOException("cannot " + what + " within " + CLOSE_WAIT.toSeconds() + " s", e);
    }
  }
}
