package ai.spboucher.spbgit.runner.vertx;

import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.socket.ChannelInputShutdownEvent;
import io.netty.channel.socket.DuplexChannel;
import io.netty.channel.socket.DuplexChannelConfig;
import io.vertx.core.http.HttpConnection;
import io.vertx.core.internal.net.NetSocketInternal;
import io.vertx.core.net.NetSocket;
import io.vertx.core.net.impl.ConnectionBase;

/**
 * The one place the runner reaches under Vert.x's public API to the Netty channel of a connection
 * (the other is {@code sockets.StrictRequestDecoder}, which must extend Vert.x's decoder to take
 * its place). Vert.x {@value #WRITTEN_FOR} has no public API for any of this:
 *
 * <ul>
 *   <li>{@code io.vertx.core.net.impl.ConnectionBase#channel()}, cast from an {@link
 *       HttpConnection}: to write an answer past the HTTP encoder (Vert.x has no response object
 *       before a request head decoded, nor for a connection beyond the limit), to watch the
 *       channel's close (Vert.x's close handler also fires on a half-close and goes quiet once the
 *       connection became a tunnel), to replace the pipeline's {@value #HTTP_DECODER} handler with
 *       a stricter one and add a handler behind it, and to allow half-closure (no option for
 *       either).
 *   <li>{@code io.vertx.core.internal.net.NetSocketInternal}, cast from a {@link NetSocket}: its
 *       {@code eventHandler}, the only way Vert.x passes on the peer's half-close ({@link
 *       ChannelInputShutdownEvent}), and its channel, to shut the output down (a {@link NetSocket}
 *       can only close both directions) and to allow half-closure.
 *   <li>{@code io.vertx.core.http.impl.VertxHttpRequestDecoder}, extended by {@code
 *       StrictRequestDecoder}: the pipeline's HTTP/1.x decoder, whose messages the rest of Vert.x's
 *       server pipeline expects.
 * </ul>
 *
 * <p>{@code NettyChannelsTest} exercises each path on a real Vert.x and fails on any other Vert.x
 * version: re-check this class and {@code StrictRequestDecoder} against the new one's sources
 * before moving its pin.
 *
 * <p>Threading: the methods may be called from any thread; handlers and actions run on the
 * connection's event loop.
 */
public final class NettyChannels {

  /** The Vert.x version these internals were checked against. */
  public static final String WRITTEN_FOR = "5.0.7";

  /** The name of Vert.x's HTTP/1.x request decoder in a server connection's pipeline. */
  public static final String HTTP_DECODER = "httpDecoder";

  private NettyChannels() {}

  /** The Netty channel under an HTTP connection. */
  static Channel channelOf(HttpConnection connection) {
    return ((ConnectionBase) connection).channel();
  }

  /** The Netty channel under a TCP socket. */
  static DuplexChannel channelOf(NetSocket socket) {
    return (DuplexChannel) ((NetSocketInternal) socket).channelHandlerContext().channel();
  }

  /**
   * Writes {@code bytes} at the head of the connection's pipeline, past Vert.x's HTTP encoder, and
   * closes the connection once they are flushed.
   */
  public static void writeRawAndClose(HttpConnection connection, byte[] bytes) {
    channelOf(connection)
        .pipeline()
        .firstContext()
        .writeAndFlush(Unpooled.wrappedBuffer(bytes))
        .addListener(ChannelFutureListener.CLOSE);
  }

  /**
   * Runs {@code action} on the connection's event loop once its channel is closed (fully, not
   * half), even after the connection became a tunnel.
   *
   * @return stops watching
   */
  public static Runnable whenClosed(HttpConnection connection, Runnable action) {
    ChannelFuture closed = channelOf(connection).closeFuture();
    ChannelFutureListener listener = done -> action.run();
    closed.addListener(listener);
    return () -> closed.removeListener(listener);
  }

  /** The connection's pipeline handler of type {@code type}, or null. */
  public static <T extends ChannelHandler> T handlerOf(HttpConnection connection, Class<T> type) {
    return channelOf(connection).pipeline().get(type);
  }

  /**
   * Puts {@code decoder} in the place of the connection's HTTP request decoder; call it before the
   * connection read anything.
   */
  public static void replaceDecoder(HttpConnection connection, ChannelHandler decoder) {
    channelOf(connection).pipeline().replace(HTTP_DECODER, HTTP_DECODER, decoder);
  }

  /**
   * Runs {@code action} on the event loop when the client shuts its side of the connection
   * (half-closure must be allowed), after the decoder fired the requests it still held.
   */
  public static void onHalfClose(HttpConnection connection, Runnable action) {
    channelOf(connection).pipeline().addAfter(HTTP_DECODER, "inputEnd", new InputEnd(action));
  }

  /** Runs {@code action} on the event loop when the peer shuts its side of the socket. */
  public static void onHalfClose(NetSocket socket, Runnable action) {
    ((NetSocketInternal) socket)
        .eventHandler(
            event -> {
              if (event instanceof ChannelInputShutdownEvent) {
                action.run();
              }
            });
  }

  /** Lets the connection stay open, for writing, once the client shut its side. */
  public static void allowHalfClosure(HttpConnection connection) {
    ((DuplexChannelConfig) channelOf(connection).config()).setAllowHalfClosure(true);
  }

  /** Lets the socket stay open, for writing, once the peer shut its side. */
  public static void allowHalfClosure(NetSocket socket) {
    ((DuplexChannelConfig) channelOf(socket).config()).setAllowHalfClosure(true);
  }

  /** Shuts the socket's output: the peer reads the end of the stream, and may still write. */
  public static void shutdownOutput(NetSocket socket) {
    channelOf(socket).shutdownOutput();
  }

  /** Passes the input's end on as {@code action}, and the event on down the pipeline. */
  private static final class InputEnd extends ChannelInboundHandlerAdapter {

    private final Runnable action;

    InputEnd(Runnable action) {
      this.action = action;
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object event) {
      if (event instanceof ChannelInputShutdownEvent) {
        action.run();
      }
      ctx.fireUserEventTriggered(event);
    }
  }
}
