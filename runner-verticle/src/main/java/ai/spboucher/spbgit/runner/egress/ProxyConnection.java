package ai.spboucher.spbgit.runner.egress;

import ai.spboucher.spbgit.runner.sockets.JobSocketServer;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketTimeoutException;
import java.net.StandardSocketOptions;
import java.net.UnknownHostException;
import java.nio.ByteBuffer;
import java.nio.channels.Channel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One job connection to the proxy, served on one worker thread: read and check the request head, connect to
 * the admitted target, then relay bytes both ways (the target-to-job direction on a second worker thread).
 */
final class ProxyConnection implements JobSocketServer.Connection {

  private static final System.Logger LOG = System.getLogger(ProxyConnection.class.getName());
  private static final byte[] ESTABLISHED =
      "HTTP/1.1 200 Connection Established\r\n\r\n".getBytes(StandardCharsets.US_ASCII);
  private static final int HEAD_PENDING = 0;
  private static final int HEAD_TIMED_OUT = 1;
  private static final int HEAD_DONE = 2;

  private final EgressProxy proxy;
  private final SocketChannel client;
  private final Instant startedAt = Instant.now();
  private final long startNanos = System.nanoTime();
  private final AtomicInteger headState = new AtomicInteger(HEAD_PENDING);
  private final AtomicLong bytesUp = new AtomicLong();
  private final AtomicLong bytesDown = new AtomicLong();
  private SocketChannel upstream;
  private boolean aborted;
  // Written and read only by the thread running run().
  private ProxyRequest request;
  private boolean allowed;
  private boolean connected;
  private String failure;

  ProxyConnection(EgressProxy proxy, SocketChannel client) {
    this.proxy = proxy;
    this.client = client;
  }

  @Override
  public void run() {
    Future<?> watchdog = null;
    try {
      watchdog = proxy.timer().schedule(this::headTimedOut,
          proxy.settings().headTimeout().toMillis(), TimeUnit.MILLISECONDS);
      serve();
    } catch (RejectedRequest e) {
      failure = failure == null ? e.getMessage() : failure;
      reply(e.response());
    } catch (IOException e) {
      failure = failure == null && !connected ? "connection ended: " + e.getMessage() : failure;
    } catch (RuntimeException e) {
      if (!proxy.isClosed()) {
        LOG.log(System.Logger.Level.WARNING, "egress connection failed", e);
      }
      failure = connected ? failure : "proxy error: " + e;
      if (!connected) {
        reply(RejectedRequest.response(500, "proxy error"));
      }
    } finally {
      if (watchdog != null) {
        watchdog.cancel(false);
      }
      abort();
      recordAttempt();
    }
  }

  private void recordAttempt() {
    if (request != null) {
      proxy.settings().recorder().record(new EgressRecord(startedAt, request.method(), request.target().host(),
          request.target().port(), allowed, bytesUp.get(), bytesDown.get(),
          Duration.ofNanos(System.nanoTime() - startNanos), failure));
    }
  }

  /** Closes both sides now; blocked reads and writes on them end with an exception. */
  @Override
  public synchronized void abort() {
    aborted = true;
    closeQuietly(client);
    closeQuietly(upstream);
  }

  private void serve() throws IOException, RejectedRequest {
    ByteBuffer head = ByteBuffer.allocate(proxy.settings().maxHeadBytes());
    int headLength = readHead(head);
    if (headLength < 0) {
      return;
    }
    request = ProxyRequest.parse(head.array(), headLength);
    HostPort target = request.target();
    if (!proxy.settings().policy().admits(target)) {
      failure = "not on the allow-list";
      throw new RejectedRequest(403, "egress to " + target + " is not allowed for this job");
    }
    List<InetAddress> addresses = resolve(target);
    allowed = true;
    connect(addresses, target.port());
    connected = true;
    if (request.isConnect()) {
      writeFully(client, ByteBuffer.wrap(ESTABLISHED));
    } else {
      bytesUp.addAndGet(writeFully(upstream, ByteBuffer.wrap(request.upstreamHead())));
    }
    head.flip().position(headLength);
    bytesUp.addAndGet(writeFully(upstream, head));
    relay();
  }

  /** Reads until the blank line ending the head; its length, or -1 if the job closed before sending anything. */
  private int readHead(ByteBuffer buf) throws IOException, RejectedRequest {
    int scanned = 0;
    while (true) {
      if (!buf.hasRemaining()) {
        throw new RejectedRequest(431, "request head larger than " + buf.capacity() + " bytes");
      }
      if (client.read(buf) < 0) {
        if (headState.get() == HEAD_TIMED_OUT) {
          throw new RejectedRequest(408, "request head not received in time");
        }
        if (buf.position() == 0) {
          return -1;
        }
        throw new RejectedRequest(400, "connection closed inside the request head");
      }
      int end = endOfHead(buf.array(), Math.max(0, scanned - 3), buf.position());
      if (end > 0) {
        if (!headState.compareAndSet(HEAD_PENDING, HEAD_DONE)) {
          throw new RejectedRequest(408, "request head not received in time");
        }
        return end;
      }
      scanned = buf.position();
    }
  }

  private List<InetAddress> resolve(HostPort target) throws RejectedRequest {
    if (target.isIpLiteral()) {
      try {
        return List.of(target.literalAddress());
      } catch (UnknownHostException e) {
        throw new IllegalStateException("validated literal did not parse: " + target, e);
      }
    }
    List<InetAddress> usable = new ArrayList<>();
    try {
      // Resolution happens here, on the runner: the sandbox has no DNS.
      for (InetAddress address : InetAddress.getAllByName(target.host())) {
        if (!proxy.settings().refuseLocalResolutions() || !isLocal(address)) {
          usable.add(address);
        }
      }
    } catch (UnknownHostException e) {
      allowed = true;
      failure = "unknown host";
      throw new RejectedRequest(502, "cannot resolve " + target.host());
    }
    if (usable.isEmpty()) {
      failure = "resolves only to local addresses";
      throw new RejectedRequest(403, "egress to " + target + " is not allowed for this job (" + failure + ")");
    }
    return usable;
  }

  private void connect(List<InetAddress> addresses, int port) throws IOException, RejectedRequest {
    long deadline = System.nanoTime() + proxy.settings().connectTimeout().toNanos();
    IOException last = null;
    for (InetAddress address : addresses) {
      long remainingMillis = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
      if (remainingMillis <= 0) {
        break;
      }
      SocketChannel channel = SocketChannel.open();
      if (!attach(channel)) {
        throw new IOException("proxy closed");
      }
      try {
        channel.socket().connect(new InetSocketAddress(address, port),
            (int) Math.min(remainingMillis, Integer.MAX_VALUE));
        channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
        return;
      } catch (IOException e) {
        closeQuietly(channel);
        if (isAborted()) {
          throw e;
        }
        last = e;
      }
    }
    failure = last instanceof SocketTimeoutException || last == null ? "connect timed out"
        : "cannot connect: " + last.getMessage();
    throw new RejectedRequest(last instanceof SocketTimeoutException || last == null ? 504 : 502,
        "egress to " + request.target() + " failed: " + failure);
  }

  /**
   * Relays until both directions have ended. End of stream on one side is passed on as a half-close to the
   * other, so a request/response exchange completes; an error on either side closes both.
   */
  private void relay() throws IOException {
    Future<?> down = proxy.workers().submit(() -> copy(upstream, client, bytesDown));
    copy(client, upstream, bytesUp);
    try {
      down.get();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (ExecutionException e) {
      throw new IOException("relay failed", e.getCause());
    }
  }

  private void copy(SocketChannel from, SocketChannel to, AtomicLong counter) {
    ByteBuffer buf = ByteBuffer.allocate(16 * 1024);
    try {
      while (from.read(buf) >= 0) {
        buf.flip();
        counter.addAndGet(writeFully(to, buf));
        buf.clear();
      }
      to.shutdownOutput();
    } catch (IOException e) {
      abort();
    }
  }

  private void headTimedOut() {
    if (headState.compareAndSet(HEAD_PENDING, HEAD_TIMED_OUT)) {
      try {
        // Wakes the blocked read with end-of-stream; the output stays open for the 408.
        client.shutdownInput();
      } catch (IOException e) {
        closeQuietly(client);
      }
    }
  }

  private void reply(byte[] response) {
    try {
      writeFully(client, ByteBuffer.wrap(response));
    } catch (IOException e) {
      LOG.log(System.Logger.Level.DEBUG, "could not send the refusal: " + e);
    }
  }

  private synchronized boolean attach(SocketChannel channel) {
    if (aborted) {
      closeQuietly(channel);
      return false;
    }
    upstream = channel;
    return true;
  }

  private synchronized boolean isAborted() {
    return aborted;
  }

  private static long writeFully(SocketChannel to, ByteBuffer buf) throws IOException {
    long written = 0;
    while (buf.hasRemaining()) {
      written += to.write(buf);
    }
    return written;
  }

  private static int endOfHead(byte[] b, int from, int to) {
    for (int i = from; i + 3 < to; i++) {
      if (b[i] == '\r' && b[i + 1] == '\n' && b[i + 2] == '\r' && b[i + 3] == '\n') {
        return i + 4;
      }
    }
    return -1;
  }

  private static boolean isLocal(InetAddress address) {
    return address.isLoopbackAddress() || address.isLinkLocalAddress() || address.isAnyLocalAddress()
        || address.isMulticastAddress();
  }

  private static void closeQuietly(Channel channel) {
    if (channel != null) {
      try {
        channel.close();
      } catch (IOException e) {
        LOG.log(System.Logger.Level.DEBUG, "close failed: " + e);
      }
    }
  }
}
