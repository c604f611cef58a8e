package ai.spboucher.spbgit.runner.egress;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Real TCP servers on ephemeral loopback ports, standing in for the hosts a job may or may not
 * reach.
 */
final class TargetServers {

  private TargetServers() {}

  /**
   * Accepts connections on a daemon thread and counts them; what it does with each is up to the
   * subclass.
   */
  abstract static class Target implements AutoCloseable {
    final ServerSocket server;
    final AtomicInteger accepted = new AtomicInteger();

    Target(InetAddress address) throws IOException {
      server = new ServerSocket();
      server.bind(new InetSocketAddress(address, 0));
      Thread thread = new Thread(this::acceptLoop, getClass().getSimpleName() + "-" + port());
      thread.setDaemon(true);
      thread.start();
    }

    int port() {
      return server.getLocalPort();
    }

    private void acceptLoop() {
      while (!server.isClosed()) {
        try {
          Socket socket = server.accept();
          accepted.incrementAndGet();
          Thread thread =
              new Thread(
                  () -> {
                    try (socket) {
                      serve(socket);
                    } catch (IOException e) {
                      // the peer went away: nothing to do in a test server
                    }
                  });
          thread.setDaemon(true);
          thread.start();
        } catch (IOException e) {
          return;
        }
      }
    }

    abstract void serve(Socket socket) throws IOException;

    @Override
    public void close() throws IOException {
      server.close();
    }
  }

  /** Echoes every byte back; counts down {@link #peerClosed} when a client's stream ends. */
  static final class Echo extends Target {
    final CountDownLatch peerClosed = new CountDownLatch(1);

    Echo() throws IOException {
      this(InetAddress.getLoopbackAddress());
    }

    Echo(InetAddress address) throws IOException {
      super(address);
    }

    @Override
    void serve(Socket socket) throws IOException {
      InputStream in = socket.getInputStream();
      OutputStream out = socket.getOutputStream();
      byte[] buf = new byte[8192];
      try {
        for (int n; (n = in.read(buf)) >= 0; ) {
          out.write(buf, 0, n);
        }
      } finally {
        peerClosed.countDown();
      }
    }
  }

  /** One request received by {@link Http}: its head as sent and its Content-Length body. */
  record Received(String head, String body) {
    String requestLine() {
      return head.substring(0, head.indexOf("\r\n"));
    }
  }

  /**
   * Answers one request per connection with {@code 200} and body {@code hello}, keeping what it
   * received.
   */
  static final class Http extends Target {
    static final String RESPONSE =
        "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello";
    final BlockingQueue<Received> received = new LinkedBlockingQueue<>();

    Http() throws IOException {
      super(InetAddress.getLoopbackAddress());
    }

    @Override
    void serve(Socket socket) throws IOException {
      InputStream in = socket.getInputStream();
      ByteArrayOutputStream head = new ByteArrayOutputStream();
      while (!head.toString(StandardCharsets.ISO_8859_1).endsWith("\r\n\r\n")) {
        int b = in.read();
        if (b < 0) {
          return;
        }
        head.write(b);
      }
      String headText = head.toString(StandardCharsets.ISO_8859_1);
      int length = 0;
      for (String line : headText.split("\r\n")) {
        if (line.toLowerCase(Locale.ROOT).startsWith("content-length:")) {
          length = Integer.parseInt(line.substring(15).trim());
        }
      }
      received.add(
          new Received(headText, new String(in.readNBytes(length), StandardCharsets.ISO_8859_1)));
      socket.getOutputStream().write(RESPONSE.getBytes(StandardCharsets.ISO_8859_1));
      socket.shutdownOutput();
      // Read whatever else comes (a pipelined request) so that closing does not reset the response.
      socket.setSoTimeout(5000);
      in.transferTo(OutputStream.nullOutputStream());
    }
  }

  /** A loopback port with nothing listening on it (bound, then released). */
  static int unusedPort() throws IOException {
    try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return socket.getLocalPort();
    }
  }
}
