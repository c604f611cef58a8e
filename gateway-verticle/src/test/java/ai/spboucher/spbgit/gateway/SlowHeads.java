package ai.spboucher.spbgit.gateway;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * A slow-loris: connections from one source address that send the start of a request head, then one
 * more header line now and then, and never finish it. Tells which of them the server still holds,
 * which it closed and after how long, and which it answered. Sources other than 127.0.0.1 (any of
 * 127.0.0.0/8 on Linux) let a test be several clients at once.
 *
 * <p>Threading: one thread per instance watches and feeds the connections; the accessors may be
 * called from any thread.
 */
public final class SlowHeads implements AutoCloseable {

  private static final long TRICKLE_MS = 1_000;
  private static final byte[] START =
      ("GET /api/v1/repos HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: slow-heads\r\n")
          .getBytes(StandardCharsets.US_ASCII);

  /** One connection and what became of it. */
  private static final class Slow {
    final SocketChannel channel;
    final long openedAt = System.nanoTime();
    volatile long closedAt;
    final StringBuffer answer = new StringBuffer();

    Slow(SocketChannel channel) {
      this.channel = channel;
    }
  }

  private final List<Slow> connections = new ArrayList<>();
  private final int failedToConnect;
  private final Selector selector;
  private final Thread watcher;
  private volatile boolean stopping;

  private SlowHeads(List<Slow> connections, int failedToConnect, Selector selector) {
    this.connections.addAll(connections);
    this.failedToConnect = failedToConnect;
    this.selector = selector;
    this.watcher = new Thread(this::watch, "slow-heads");
    watcher.setDaemon(true);
  }

  /**
   * Opens {@code count} connections from {@code source} to {@code port} on 127.0.0.1, each sending
   * a partial head. A connection that cannot be made within {@code connectTimeout} (a server that
   * stopped accepting) is counted in {@link #failedToConnect()}.
   */
  public static SlowHeads open(String source, int port, int count, Duration connectTimeout)
      throws IOException {
    Selector selector = Selector.open();
    List<Slow> opened = new ArrayList<>();
    int failed = 0;
    for (int i = 0; i < count; i++) {
      SocketChannel channel = SocketChannel.open();
      try {
        channel.bind(new InetSocketAddress(source, 0));
        channel
            .socket()
            .connect(new InetSocketAddress("127.0.0.1", port), (int) connectTimeout.toMillis());
        channel.write(ByteBuffer.wrap(START));
        channel.configureBlocking(false);
        Slow slow = new Slow(channel);
        channel.register(selector, SelectionKey.OP_READ, slow);
        opened.add(slow);
      } catch (IOException e) {
        channel.close();
        failed++;
      }
    }
    SlowHeads heads = new SlowHeads(opened, failed, selector);
    heads.watcher.start();
    return heads;
  }

  private void watch() {
    long nextTrickle = System.nanoTime();
    ByteBuffer buffer = ByteBuffer.allocate(4096);
    int line = 0;
    try {
      while (!stopping) {
        selector.select(200);
        for (SelectionKey key : selector.selectedKeys()) {
          read((Slow) key.attachment(), key, buffer);
        }
        selector.selectedKeys().clear();
        if (System.nanoTime() - nextTrickle > 0) {
          nextTrickle = System.nanoTime() + TRICKLE_MS * 1_000_000;
          trickle(("X-Slow-" + line++ + ": 1\r\n").getBytes(StandardCharsets.US_ASCII));
        }
      }
    } catch (IOException | RuntimeException e) {
      if (!stopping) {
        throw new IllegalStateException("slow heads stopped watching", e);
      }
    }
  }

  private void read(Slow slow, SelectionKey key, ByteBuffer buffer) {
    buffer.clear();
    int n;
    try {
      n = slow.channel.read(buffer);
    } catch (IOException e) {
      n = -1;
    }
    if (n < 0) {
      slow.closedAt = System.nanoTime();
      key.cancel();
      closeQuietly(slow.channel);
    } else if (slow.answer.length() < 1024) {
      slow.answer.append(new String(buffer.array(), 0, n, StandardCharsets.ISO_8859_1));
    }
  }

  private void trickle(byte[] header) {
    for (Slow slow : connections) {
      if (slow.closedAt == 0) {
        try {
          slow.channel.write(ByteBuffer.wrap(header));
        } catch (IOException e) {
          // A reset: the read that follows sees the close.
        }
      }
    }
  }

  /** Connections the server still holds open. */
  public int held() {
    return (int) connections.stream().filter(s -> s.closedAt == 0).count();
  }

  /** Connections the server closed (with or without an answer). */
  public int closed() {
    return connections.size() - held();
  }

  /** Connections that could not be made at all. */
  public int failedToConnect() {
    return failedToConnect;
  }

  /**
   * Connections the server answered with this status before closing (a refusal rather than a
   * timeout).
   */
  public int answered(int status) {
    return (int)
        connections.stream()
            .filter(s -> s.answer.toString().startsWith("HTTP/1.1 " + status + " "))
            .count();
  }

  /** The longest any closed connection was open, from its connect to the server's close. */
  public Duration longestBeforeClose() {
    return Duration.ofNanos(
        connections.stream()
            .filter(s -> s.closedAt != 0)
            .mapToLong(s -> s.closedAt - s.openedAt)
            .max()
            .orElse(0));
  }

  /**
   * Waits until the server closed every connection, or {@code limit} passed; true if it closed them
   * all.
   */
  public boolean awaitAllClosed(Duration limit) throws InterruptedException {
    long deadline = System.nanoTime() + limit.toNanos();
    while (held() > 0 && System.nanoTime() < deadline) {
      Thread.sleep(50);
    }
    return held() == 0;
  }

  @Override
  public void close() throws IOException, InterruptedException {
    stopping = true;
    selector.wakeup();
    watcher.join(5_000);
    connections.forEach(s -> closeQuietly(s.channel));
    selector.close();
  }

  private static void closeQuietly(SocketChannel channel) {
    try {
      channel.close();
    } catch (IOException e) {
      // Closing a socket the peer reset: nothing left to release.
    }
  }
}
