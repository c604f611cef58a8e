package ai.spboucher.spbgit.runner.vertx;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpConnection;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.http.impl.VertxHttpRequestDecoder;
import io.vertx.core.net.NetServer;
import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Pins the Vert.x internals {@link NettyChannels} relies on: each of its paths runs on a real
 * Vert.x, over real TCP connections on 127.0.0.1, and the Vert.x version must be the one they were
 * checked against, so that an upgrade fails here first.
 */
class NettyChannelsTest {

  private static final int WAIT_SECONDS = 10;

  private Vertx vertx;

  @BeforeEach
  void startVertx() {
    vertx = Vertx.vertx();
  }

  @AfterEach
  void closeVertx() throws Exception {
    await(vertx.close());
  }

  @Test
  void vertxIsTheVersionTheInternalsWereCheckedAgainst() throws IOException {
    String version;
    try (InputStream in =
        Vertx.class.getClassLoader().getResourceAsStream("META-INF/vertx/vertx-version.txt")) {
      assertNotNull(in, "vertx-core carries no META-INF/vertx/vertx-version.txt");
      version = new String(in.readAllBytes(), StandardCharsets.UTF_8).trim();
    }
    assertEquals(
        NettyChannels.WRITTEN_FOR,
        version,
        "Vert.x is "
            + version
            + ", but runner.vertx.NettyChannels (and sockets.StrictRequestDecoder) use Vert.x"
            + " internals checked against "
            + NettyChannels.WRITTEN_FOR
            + ": re-check them against the new version's sources, then move WRITTEN_FOR");
  }

  @Test
  void reachesTheChannelUnderAnHttpConnection() throws Exception {
    AtomicReference<HttpConnection> connection = new AtomicReference<>();
    CountingDecoder[] decoder = new CountingDecoder[1];
    AtomicReference<CountingDecoder> found = new AtomicReference<>();
    CountDownLatch halfClosed = new CountDownLatch(1);
    CountDownLatch closed = new CountDownLatch(1);
    AtomicInteger requests = new AtomicInteger();
    // As JobSocket's: with h2c on, Vert.x reads the first bytes before the connection handler.
    HttpServerOptions options =
        new HttpServerOptions().setHost("127.0.0.1").setPort(0).setHttp2ClearTextEnabled(false);
    byte[] answer =
        "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok"
            .getBytes(StandardCharsets.US_ASCII);
    HttpServer server =
        vertx
            .createHttpServer(options)
            .connectionHandler(
                c -> {
                  connection.set(c);
                  decoder[0] = new CountingDecoder(options);
                  NettyChannels.replaceDecoder(c, decoder[0]);
                  NettyChannels.allowHalfClosure(c);
                  NettyChannels.onHalfClose(
                      c,
                      () -> {
                        halfClosed.countDown();
                        // Answered only now: the client's half-close must have left the
                        // connection open for writing.
                        NettyChannels.writeRawAndClose(c, answer);
                      });
                  NettyChannels.whenClosed(c, closed::countDown);
                })
            .requestHandler(
                request -> {
                  requests.incrementAndGet();
                  found.set(NettyChannels.handlerOf(request.connection(), CountingDecoder.class));
                });
    await(server.listen());

    try (Socket client = new Socket("127.0.0.1", server.actualPort())) {
      client.setSoTimeout(WAIT_SECONDS * 1000);
      client.getOutputStream().write("GET / HTTP/1.1\r\nHost: x\r\n\r\n".getBytes());
      client.shutdownOutput();
      assertEquals(
          new String(answer, StandardCharsets.US_ASCII),
          new String(client.getInputStream().readAllBytes(), StandardCharsets.US_ASCII));
    }

    assertTrue(halfClosed.await(WAIT_SECONDS, TimeUnit.SECONDS), "half-close reported");
    assertTrue(closed.await(WAIT_SECONDS, TimeUnit.SECONDS), "close reported");
    assertEquals(1, requests.get());
    assertTrue(decoder[0].decodes.get() > 0, "the replacement decoder decoded the request");
    assertSame(decoder[0], found.get(), "the replacement decoder found in the pipeline");
    assertNotNull(connection.get());
  }

  @Test
  void stopsWatchingAClosedConnection() throws Exception {
    CountDownLatch watched = new CountDownLatch(1);
    AtomicInteger unwatchedCalls = new AtomicInteger();
    HttpServer server =
        vertx
            .createHttpServer(new HttpServerOptions().setHost("127.0.0.1").setPort(0))
            .connectionHandler(
                c -> {
                  NettyChannels.whenClosed(c, unwatchedCalls::incrementAndGet).run();
                  NettyChannels.whenClosed(c, watched::countDown);
                })
            .requestHandler(request -> request.response().end());
    await(server.listen());

    try (Socket client = new Socket("127.0.0.1", server.actualPort())) {
      client.getOutputStream().write("GET / HTTP/1.1\r\nHost: x\r\n\r\n".getBytes());
    }

    assertTrue(watched.await(WAIT_SECONDS, TimeUnit.SECONDS), "close reported");
    assertEquals(0, unwatchedCalls.get(), "a watch stopped is not called");
  }

  @Test
  void halfClosesATcpSocketEachWay() throws Exception {
    CompletableFuture<String> received = new CompletableFuture<>();
    NetServer server =
        vertx
            .createNetServer()
            .connectHandler(
                socket -> {
                  Buffer data = Buffer.buffer();
                  socket.handler(data::appendBuffer);
                  NettyChannels.allowHalfClosure(socket);
                  NettyChannels.onHalfClose(socket, () -> received.complete(data.toString()));
                  socket.write("hello").onComplete(written -> NettyChannels.shutdownOutput(socket));
                });
    await(server.listen(0, "127.0.0.1"));

    try (Socket client = new Socket("127.0.0.1", server.actualPort())) {
      client.setSoTimeout(WAIT_SECONDS * 1000);
      // Returns at the end of the stream: the server shut its output down.
      assertEquals("hello", new String(client.getInputStream().readAllBytes()));
      // Its input is still open, and the client's own half-close is passed on.
      client.getOutputStream().write("hi".getBytes());
      client.shutdownOutput();
      assertEquals("hi", received.get(WAIT_SECONDS, TimeUnit.SECONDS));
    }
  }

  private static <T> T await(Future<T> future) throws Exception {
    return future.toCompletionStage().toCompletableFuture().get(WAIT_SECONDS, TimeUnit.SECONDS);
  }

  /** Vert.x's decoder, counting its calls: shows the replacement took the decoder's place. */
  private static final class CountingDecoder extends VertxHttpRequestDecoder {

    final AtomicInteger decodes = new AtomicInteger();

    CountingDecoder(HttpServerOptions options) {
      super(options);
    }

    @Override
    protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out)
        throws Exception {
      decodes.incrementAndGet();
      super.decode(ctx, in, out);
    }
  }
}
