package ai.spboucher.spbgit.runner;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A TCP relay on 127.0.0.1 in front of one port, whose two directions a test can hold and release:
 * what is held is neither lost nor reordered, only delayed, as by a stalled network path or a
 * paused process. Connections stay open throughout, so the client does not notice anything but
 * silence.
 *
 * <p>Threading: two threads per connection copy the bytes; {@code hold*} and {@link #release} may
 * be called from any thread.
 */
final class FreezableProxy implements AutoCloseable {

  private final ServerSocket listener;
  private final int targetPort;
  private final Gate toClient = new Gate();
  private final Gate toServer = new Gate();
  private final List<Socket> sockets = new CopyOnWriteArrayList<>();
  private volatile boolean closed;

  private FreezableProxy(ServerSocket listener, int targetPort) {
    this.listener = listener;
    this.targetPort = targetPort;
  }

  static FreezableProxy start(int targetPort) throws IOException {
    FreezableProxy proxy =
        new FreezableProxy(new ServerSocket(0, 50, InetAddress.getLoopbackAddress()), targetPort);
    Thread acceptor = new Thread(proxy::accept, "freezable-proxy");
    acceptor.setDaemon(true);
    acceptor.start();
    return proxy;
  }

  String natsUrl() {
    return "nats://127.0.0.1:" + listener.getLocalPort();
  }

  /** Bytes from the server wait here until {@link #release}. */
  void holdToClient() {
    toClient.hold();
  }

  /** Bytes from the client wait here until {@link #release}. */
  void holdToServer() {
    toServer.hold();
  }

  /** Lets everything held through, in order, and everything after it. */
  void release() {
    toClient.open();
    toServer.open();
  }

  private void accept() {
    while (!closed) {
      try {
        Socket client = listener.accept();
        Socket server = new Socket(InetAddress.getLoopbackAddress(), targetPort);
        sockets.add(client);
        sockets.add(server);
        copy(client, server, toServer);
        copy(server, client, toClient);
      } catch (IOException e) {
        // The listener closed, or the target refused one connection: the client sees it closed and
        // retries.
      }
    }
  }

  private void copy(Socket from, Socket to, Gate gate) {
    Thread copier =
        new Thread(
            () -> {
              byte[] buffer = new byte[64 << 10];
              try (InputStream in = from.getInputStream();
                  OutputStream out = to.getOutputStream()) {
                int n;
                while ((n = in.read(buffer)) > 0) {
                  gate.pass();
                  out.write(buffer, 0, n);
                  out.flush();
                }
              } catch (IOException | InterruptedException e) {
                // One side went away: closing both ends tells the other.
              } finally {
                closeQuietly(from);
                closeQuietly(to);
              }
            },
            "freezable-proxy-copy");
    copier.setDaemon(true);
    copier.start();
  }

  private static void closeQuietly(Socket socket) {
    try {
      socket.close();
    } catch (IOException e) {
      // Already closed.
    }
  }

  @Override
  public void close() throws IOException {
    closed = true;
    release();
    listener.close();
    sockets.forEach(FreezableProxy::closeQuietly);
  }

  /** Blocks the copier while held. */
  private static final class Gate {
    private boolean held;

    synchronized void hold() {
      held = true;
    }

    synchronized void open() {
      held = false;
      notifyAll();
    }

    synchronized void pass() throws InterruptedException {
      while (held) {
        wait();
      }
    }
  }
}
