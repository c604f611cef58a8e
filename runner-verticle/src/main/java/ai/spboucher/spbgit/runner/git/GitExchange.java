package ai.spboucher.spbgit.runner.git;

import ai.spboucher.spbgit.runner.egress.EgressRecord;
import ai.spboucher.spbgit.runner.model.HttpHead;
import ai.spboucher.spbgit.runner.sockets.Refusal;
import ai.spboucher.spbgit.runner.sockets.JobSocketServer;
import ai.spboucher.spbgit.runner.sockets.PlainAnswer;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;

/**
 * One connection to a {@link GitRelay}, served on one worker thread: read and check the request head, connect to
 * the gateway, send the rebuilt head, then relay both ways (gateway to job on a second worker) until the gateway
 * has answered and closed.
 */
final class GitExchange implements JobSocketServer.Connection {

  private static final System.Logger LOG = System.getLogger(GitExchange.class.getName());
  private static final int BUFFER_BYTES = 64 << 10;

  private final GitRelay relay;
  private final SocketChannel client;
  private final Instant startedAt = Instant.now();
  private final long startNanos = System.nanoTime();
  private final AtomicLong bytesUp = new AtomicLong();
  private final AtomicLong bytesDown = new AtomicLong();
  private Socket upstream;
  private boolean aborted;
  private volatile boolean headTimedOut;
  // Written and read only by the thread running run().
  private HttpHead head;
  private boolean allowed;
  private boolean connected;
  private String failure;

  GitExchange(GitRelay relay, SocketChannel client) {
    this.relay = relay;
    this.client = client;
  }

  @Override
  public void run() {
    Future<?> watchdog = relay.timer().schedule(this::headTimedOut, GitRelay.HEAD_TIMEOUT.toMillis(),
        TimeUnit.MILLISECONDS);
    try {
      serve(watchdog);
    } catch (Refusal e) {
      failure = failure == null ? e.getMessage() : failure;
      reply(PlainAnswer.of(e.status(), e.getMessage()));
    } catch (IOException e) {
      failure = failure == null && !connected ? "connection ended: " + e.getMessage() : failure;
    } catch (RuntimeException e) {
      if (!relay.isClosed()) {
        LOG.log(System.Logger.Level.WARNING, "git relay connection failed", e);
      }
      if (!connected) {
        failure = "relay error: " + e;
        reply(PlainAnswer.of(500, "git relay error"));
      }
    } finally {
      watchdog.cancel(false);
      abort();
      if (head != null) {
        GitRelay.Origin origin = relay.origin();
        relay.record(new EgressRecord(startedAt, head.method(), origin.host(), origin.port(), allowed,
            bytesUp.get(), bytesDown.get(), Duration.ofNanos(System.nanoTime() - startNanos), failure));
      }
    }
  }

  /** Cuts both sides; blocked reads and writes on them end with an exception. */
  @Override
  public synchronized void abort() {
    aborted = true;
    closeQuietly(client);
    closeQuietly(upstream);
  }

  private void serve(Future<?> watchdog) throws IOException, Refusal {
    ByteBuffer in = ByteBuffer.allocate(GitRelay.MAX_HEAD_BYTES);
    int headLength = readHead(in);
    if (headLength < 0) {
      return;
    }
    watchdog.cancel(false);
    head = HttpHead.parse(Arrays.copyOf(in.array(), headLength - 4));
    if (!relay.route().admits(head.method(), head.path(), head.query())) {
      failure = "not a git request for this job's repository: " + head.method() + " " + head.path();
      throw new Refusal(403, "forbidden", "the git relay serves only smart HTTP of " + relay.route().repoPath()
          + ", not " + head.method() + " " + head.path());
    }
    head.chunked();
    head.contentLength();
    allowed = true;
    connect();
    connected = true;
    OutputStream up = upstream.getOutputStream();
    byte[] rebuilt = upstreamHead();
    up.write(rebuilt);
    up.write(in.array(), headLength, in.position() - headLength);
    up.flush();
    bytesUp.addAndGet(rebuilt.length + in.position() - headLength);
    relay(up, upstream.getInputStream());
  }

  /** Reads until the blank line ending the head; its length with the blank line, or -1 if nothing came. */
  private int readHead(ByteBuffer buf) throws IOException, Refusal {
    int scanned = 0;
    while (true) {
      if (!buf.hasRemaining()) {
        throw new Refusal(431, "too_large", "request head larger than " + buf.capacity() + " bytes");
      }
      if (client.read(buf) < 0) {
        if (headTimedOut) {
          throw new Refusal(408, "timeout", "request head not received within "
              + GitRelay.HEAD_TIMEOUT.toSeconds() + " s");
        }
        if (buf.position() == 0) {
          return -1;
        }
        throw new Refusal(400, "bad_request", "connection closed inside the request head");
      }
      for (int i = Math.max(0, scanned - 3); i + 3 < buf.position(); i++) {
        byte[] b = buf.array();
        if (b[i] == '\r' && b[i + 1] == '\n' && b[i + 2] == '\r' && b[i + 3] == '\n') {
          return i + 4;
        }
      }
      scanned = buf.position();
    }
  }

  private byte[] upstreamHead() {
    StringBuilder out = new StringBuilder(512);
    out.append(head.method()).append(' ').append(head.path());
    if (head.query() != null) {
      out.append('?').append(head.query());
    }
    out.append(" HTTP/1.1\r\nHost: ").append(relay.origin().authority())
        .append("\r\nAuthorization: ").append(relay.authorization())
        .append("\r\nConnection: close\r\n");
    head.headers().forEach((name, value) -> {
      if (GitRelay.FORWARDED_HEADERS.contains(name)) {
        out.append(name).append(": ").append(value).append("\r\n");
      }
    });
    return out.append("\r\n").toString().getBytes(StandardCharsets.ISO_8859_1);
  }

  private void connect() throws IOException, Refusal {
    GitRelay.Origin origin = relay.origin();
    Socket socket = new Socket();
    if (!attach(socket)) {
      throw new IOException("relay closed");
    }
    try {
      socket.connect(new InetSocketAddress(origin.host(), origin.port()),
          (int) GitRelay.CONNECT_TIMEOUT.toMillis());
      socket.setTcpNoDelay(true);
      if (origin.tls()) {
        SSLSocket secure = (SSLSocket) origin.tlsFactory().createSocket(socket, origin.host(), origin.port(), true);
        SSLParameters parameters = secure.getSSLParameters();
        parameters.setEndpointIdentificationAlgorithm("HTTPS");
        secure.setSSLParameters(parameters);
        if (!attach(secure)) {
          throw new IOException("relay closed");
        }
        secure.startHandshake();
      }
    } catch (IOException e) {
      if (isAborted()) {
        throw e;
      }
      failure = e instanceof SocketTimeoutException ? "connect timed out" : "cannot reach the gateway: " + e;
      throw new Refusal(e instanceof SocketTimeoutException ? 504 : 502, "upstream",
          "the git relay cannot reach the gateway at " + origin.authority());
    }
  }

  /** Relays until the gateway has answered and closed; the job's side is cut then. */
  private void relay(OutputStream up, InputStream down) throws IOException {
    Future<?> requestBody = relay.workers().submit(() -> copyFromJob(up));
    byte[] buf = new byte[BUFFER_BYTES];
    try {
      int n;
      while ((n = down.read(buf)) >= 0) {
        ByteBuffer chunk = ByteBuffer.wrap(buf, 0, n);
        while (chunk.hasRemaining()) {
          client.write(chunk);
        }
        bytesDown.addAndGet(n);
      }
    } finally {
      abort();
      try {
        requestBody.get(5, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      } catch (ExecutionException | java.util.concurrent.TimeoutException e) {
        requestBody.cancel(true);
      }
    }
  }

  private void copyFromJob(OutputStream up) {
    ByteBuffer buf = ByteBuffer.allocate(BUFFER_BYTES);
    try {
      while (client.read(buf) >= 0) {
        up.write(buf.array(), 0, buf.position());
        up.flush();
        bytesUp.addAndGet(buf.position());
        buf.clear();
      }
    } catch (IOException e) {
      // The answer is complete or the connection was cut: either way this direction is over.
    }
  }

  private void headTimedOut() {
    headTimedOut = true;
    try {
      // Wakes the blocked read with end-of-stream; the output stays open for the 408.
      client.shutdownInput();
    } catch (IOException e) {
      closeQuietly(client);
    }
  }

  private void reply(byte[] answer) {
    try {
      ByteBuffer buf = ByteBuffer.wrap(answer);
      while (buf.hasRemaining()) {
        client.write(buf);
      }
    } catch (IOException e) {
      LOG.log(System.Logger.Level.DEBUG, "could not send the refusal: " + e);
    }
  }

  private synchronized boolean attach(Socket socket) {
    if (aborted) {
      closeQuietly(socket);
      return false;
    }
    upstream = socket;
    return true;
  }

  private synchronized boolean isAborted() {
    return aborted;
  }

  private static void closeQuietly(AutoCloseable closeable) {
    if (closeable != null) {
      try {
        closeable.close();
      } catch (Exception e) {
        LOG.log(System.Logger.Level.DEBUG, "close failed: " + e);
      }
    }
  }
}
