package ai.spboucher.spbgit.runner.git;

import ai.spboucher.spbgit.runner.egress.EgressRecord;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.URI;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.Base64;
import java.util.Locale;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.Semaphore;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import javax.net.ssl.SSLSocketFactory;

/**
 * A job's only way to its repository, and the holder of its job token: an HTTP endpoint on a unix domain socket
 * in the job's egress directory (mounted into the container at {@code /run/spb/git.sock}) that forwards the
 * smart-HTTP requests of the job's one repository to the gateway, adding the job token as Basic credentials.
 * The token never enters the container, so nothing the job runs can read it: not from its environment, not
 * from {@code /proc/1/environ}, not from a file.
 *
 * <p>One request per connection. Only what {@link GitRoute} admits is forwarded (info/refs, upload-pack and
 * receive-pack of the clone URL's path); everything else is answered {@code 403} in plain text, which git
 * prints. The head sent upstream is rebuilt: the origin's {@code Host}, {@code Authorization: Basic} with the
 * token (any credentials the job sent are dropped), {@code Connection: close}, and only the request headers
 * git needs; after it the rest of the connection (the body, then the answer) is relayed as is. Because the
 * gateway closes after one answer, anything the job pipelines after the first request reaches it without the
 * token. What the token may do is still decided by the gateway's pre-receive gate: this relay narrows the path,
 * it does not widen the scope.
 *
 * <p>Every request that got as far as a parsed head is passed to the listener as an {@link EgressRecord} of the
 * gateway's {@code host:port}, allowed or refused.
 *
 * <p>Threading: {@link #start} binds the socket and returns. One accept thread hands each connection to a
 * bounded pool of daemon threads (two per connection while relaying). The listener is called on those threads,
 * possibly concurrently: it must be thread-safe and must not block. {@link #close()} is idempotent: it stops
 * accepting, cuts open connections and deletes the socket file.
 */
public final class GitRelay implements AutoCloseable {

  /** The socket's file name in the job's egress directory. */
  public static final String SOCKET_NAME = "git.sock";
  static final int MAX_CONNECTIONS = 8;
  static final int MAX_HEAD_BYTES = 64 << 10;
  static final Duration HEAD_TIMEOUT = Duration.ofSeconds(30);
  static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(10);
  /** The request headers a git client needs; anything else (cookies, credentials, hop-by-hop) stays behind. */
  static final Set<String> FORWARDED_HEADERS = Set.of("accept", "accept-encoding", "accept-language",
      "content-type", "content-length", "content-encoding", "transfer-encoding", "user-agent", "git-protocol",
      "expect", "pragma");

  private static final System.Logger LOG = System.getLogger(GitRelay.class.getName());
  private static final AtomicInteger INSTANCES = new AtomicInteger();

  private final Path socketPath;
  private final Origin origin;
  private final GitRoute route;
  private final String authorization;
  private final Consumer<? super EgressRecord> listener;
  private final ServerSocketChannel server;
  private final Semaphore permits = new Semaphore(MAX_CONNECTIONS);
  private final Set<GitExchange> open = ConcurrentHashMap.newKeySet();
  private final ThreadPoolExecutor workers;
  private final ScheduledThreadPoolExecutor timer;
  private final Thread acceptor;
  private volatile boolean closed;

  /** Where the relay sends what it admits: the scheme, host and port of the clone URL. */
  record Origin(boolean tls, String host, int port, SSLSocketFactory tlsFactory) {

    /** {@code host} or {@code host:port} when the port is not the scheme's default, as the Host header wants. */
    String authority() {
      String name = host.contains(":") ? "[" + host + "]" : host;
      return port == (tls ? 443 : 80) ? name : name + ":" + port;
    }
  }

  private GitRelay(Path socketPath, Origin origin, GitRoute route, String authorization,
                   Consumer<? super EgressRecord> listener, ServerSocketChannel server) {
    this.socketPath = socketPath;
    this.origin = origin;
    this.route = route;
    this.authorization = authorization;
    this.listener = listener;
    this.server = server;
    String name = "spb-git-" + INSTANCES.incrementAndGet();
    this.workers = new ThreadPoolExecutor(0, 2 * MAX_CONNECTIONS + 2, 30, TimeUnit.SECONDS,
        new SynchronousQueue<>(), daemonThreads(name + "-worker-"));
    this.timer = new ScheduledThreadPoolExecutor(1, daemonThreads(name + "-timer-"));
    this.timer.setRemoveOnCancelPolicy(true);
    this.acceptor = new Thread(this::acceptLoop, name + "-accept");
    this.acceptor.setDaemon(true);
  }

  /**
   * Binds {@code socketPath} (which must not exist) with mode 0666, so the container's unprivileged user can
   * connect, and starts accepting.
   *
   * @param cloneUrl the repository's clone URL at the gateway ({@code http} or {@code https}, no credentials)
   * @param jobToken the job's token, sent to the gateway only
   * @param tls how to reach an {@code https} gateway (its certificate is checked against the host name)
   */
  public static GitRelay start(Path socketPath, URI cloneUrl, String jobToken, SSLSocketFactory tls,
                               Consumer<? super EgressRecord> listener) throws IOException {
    Objects.requireNonNull(listener, "listener");
    Origin origin = originOf(cloneUrl, tls);
    GitRoute route = new GitRoute(cloneUrl.getRawPath());
    String authorization = "Basic " + Base64.getEncoder()
        .encodeToString(("agent:" + jobToken).getBytes(StandardCharsets.UTF_8));
    ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
    boolean bound = false;
    try {
      server.bind(UnixDomainSocketAddress.of(socketPath), MAX_CONNECTIONS);
      bound = true;
      Files.setPosixFilePermissions(socketPath, PosixFilePermissions.fromString("rw-rw-rw-"));
      GitRelay relay = new GitRelay(socketPath, origin, route, authorization, listener, server);
      relay.acceptor.start();
      return relay;
    } catch (IOException | RuntimeException e) {
      server.close();
      if (bound) {
        Files.deleteIfExists(socketPath);
      }
      throw e;
    }
  }

  static Origin originOf(URI cloneUrl, SSLSocketFactory tls) {
    String scheme = cloneUrl.getScheme() == null ? "" : cloneUrl.getScheme().toLowerCase(Locale.ROOT);
    if (!scheme.equals("http") && !scheme.equals("https")) {
      throw new IllegalArgumentException("clone URL must be http or https: " + cloneUrl);
    }
    if (cloneUrl.getRawUserInfo() != null || cloneUrl.getRawQuery() != null || cloneUrl.getHost() == null) {
      throw new IllegalArgumentException("clone URL must name a host and carry no credentials or query: "
          + cloneUrl);
    }
    boolean secure = scheme.equals("https");
    String host = cloneUrl.getHost().startsWith("[")
        ? cloneUrl.getHost().substring(1, cloneUrl.getHost().length() - 1) : cloneUrl.getHost();
    return new Origin(secure, host, cloneUrl.getPort() > 0 ? cloneUrl.getPort() : secure ? 443 : 80,
        Objects.requireNonNull(tls, "tls"));
  }

  public Path socketPath() {
    return socketPath;
  }

  /** The clone URL's path: where the container's git finds the repository behind the relay. */
  public String repoPath() {
    return route.repoPath();
  }

  @Override
  public void close() {
    synchronized (this) {
      if (closed) {
        return;
      }
      closed = true;
    }
    try {
      server.close();
      acceptor.join(2000);
      open.forEach(GitExchange::abort);
      timer.shutdownNow();
      workers.shutdown();
      workers.awaitTermination(2, TimeUnit.SECONDS);
    } catch (IOException e) {
      LOG.log(System.Logger.Level.WARNING, "cannot close git socket " + socketPath + ": " + e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } finally {
      try {
        Files.deleteIfExists(socketPath);
      } catch (IOException e) {
        LOG.log(System.Logger.Level.WARNING, "cannot delete git socket " + socketPath + ": " + e);
      }
    }
  }

  Origin origin() {
    return origin;
  }

  GitRoute route() {
    return route;
  }

  String authorization() {
    return authorization;
  }

  ThreadPoolExecutor workers() {
    return workers;
  }

  ScheduledThreadPoolExecutor timer() {
    return timer;
  }

  boolean isClosed() {
    return closed;
  }

  void record(EgressRecord record) {
    try {
      listener.accept(record);
    } catch (RuntimeException e) {
      LOG.log(System.Logger.Level.WARNING, "git relay listener failed", e);
    }
  }

  void ended(GitExchange exchange) {
    if (open.remove(exchange)) {
      permits.release();
    }
  }

  private void acceptLoop() {
    while (!closed) {
      SocketChannel client;
      try {
        client = server.accept();
      } catch (ClosedChannelException e) {
        return;
      } catch (IOException e) {
        LOG.log(System.Logger.Level.WARNING, "git relay accept failed on " + socketPath + ": " + e);
        sleepQuietly(100);
        continue;
      }
      admit(client);
    }
  }

  private void admit(SocketChannel client) {
    if (!permits.tryAcquire()) {
      refuseBusy(client);
      return;
    }
    GitExchange exchange = new GitExchange(this, client);
    open.add(exchange);
    try {
      workers.execute(exchange);
    } catch (RejectedExecutionException e) {
      ended(exchange);
      refuseBusy(client);
    }
  }

  /** Answers 503 from the accept thread without ever blocking on it. */
  private static void refuseBusy(SocketChannel client) {
    try (client) {
      client.configureBlocking(false);
      client.write(ByteBuffer.wrap(GitExchange.plainAnswer(503, "too many connections to the git relay")));
    } catch (IOException e) {
      LOG.log(System.Logger.Level.DEBUG, "could not send 503: " + e);
    }
  }

  private static ThreadFactory daemonThreads(String prefix) {
    AtomicInteger count = new AtomicInteger();
    return runnable -> {
      Thread thread = new Thread(runnable, prefix + count.incrementAndGet());
      thread.setDaemon(true);
      return thread;
    };
  }

  private static void sleepQuietly(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
