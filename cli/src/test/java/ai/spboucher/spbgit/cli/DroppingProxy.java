package ai.spboucher.spbgit.cli;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A TCP proxy in front of the gateway that cuts its first {@code connectionsToCut} websocket
 * connections abruptly (RST) once {@code bytesBeforeCut} bytes have gone to the client, as a flaky
 * network would; HTTP requests and later websockets pass untouched.
 */
final class DroppingProxy implements AutoCloseable {

  private final ServerSocket server;
  private final int targetPort;
  private final int connectionsToCut;
  private final int bytesBeforeCut;
  private final AtomicInteger webSockets = new AtomicInteger();
  private final AtomicInteger cuts = new AtomicInteger();

  DroppingProxy(int targetPort, int connectionsToCut, int bytesBeforeCut) throws IOException {
    this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    this.targetPort = targetPort;
    this.connectionsToCut = connectionsToCut;
    this.bytesBeforeCut = bytesBeforeCut;
    Thread acceptor = new Thread(this::acceptAll, "dropping-proxy");
    acceptor.setDaemon(true);
    acceptor.start();
  }

  String url() {
    return "http://127.0.0.1:" + server.getLocalPort();
  }

  /** How many connections were cut mid-stream. */
  int cuts() {
    return cuts.get();
  }

  int webSockets() {
    return webSockets.get();
  }

  private void acceptAll() {
    while (!server.isClosed()) {
      try {
        Socket client = server.accept();
        Socket upstream = new Socket(InetAddress.getLoopbackAddress(), targetPort);
        daemon(() -> relay(client, upstream));
      } catch (IOException e) {
        return;
      }
    }
  }

  private void relay(Socket client, Socket upstream) {
    try (client;
        upstream) {
      InputStream in = client.getInputStream();
      byte[] head = new byte[8192];
      int length = 0;
      // The request head tells a websocket upgrade from a plain request.
      while (length < head.length
          && !new String(head, 0, length, StandardCharsets.ISO_8859_1).contains("\r\n\r\n")) {
        int read = in.read(head, length, head.length - length);
        if (read < 0) {
          return;
        }
        length += read;
      }
      boolean webSocket =
          new String(head, 0, length, StandardCharsets.ISO_8859_1)
              .toLowerCase(Locale.ROOT)
              .contains("upgrade: websocket");
      boolean cut = webSocket && webSockets.incrementAndGet() <= connectionsToCut;
      upstream.getOutputStream().write(head, 0, length);
      daemon(
          () -> {
            copy(in, upstream, Long.MAX_VALUE);
            try {
              upstream.shutdownOutput();
            } catch (IOException e) {
              // Already closed.
            }
          });
      copy(upstream.getInputStream(), client, cut ? bytesBeforeCut : Long.MAX_VALUE);
      if (cut) {
        cuts.incrementAndGet();
        client.setSoLinger(true, 0);
      }
    } catch (IOException e) {
      // One side went away: the try closes both.
    }
  }

  /** Copies until end of stream or until {@code limit} bytes have passed. */
  private static void copy(InputStream in, Socket to, long limit) {
    try {
      OutputStream out = to.getOutputStream();
      byte[] buffer = new byte[256];
      long copied = 0;
      int read;
      while (copied < limit
          && (read = in.read(buffer, 0, (int) Math.min(buffer.length, limit - copied))) >= 0) {
        out.write(buffer, 0, read);
        out.flush();
        copied += read;
      }
    } catch (IOException e) {
      // Closed by the other direction.
    }
  }

  private static void daemon(Runnable task) {
    Thread thread = new Thread(task, "dropping-proxy-relay");
    thread.setDaemon(true);
    thread.start();
  }

  @Override
  public void close() throws IOException {
    server.close();
  }
}
