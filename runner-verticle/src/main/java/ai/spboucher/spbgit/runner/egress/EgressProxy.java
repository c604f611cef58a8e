package ai.spboucher.spbgit.runner.egress;

import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
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

/**
 * The only way out of a job's sandbox: an HTTP proxy listening on a unix domain socket that is mounted into
 * the container (which runs with {@code --network none}), letting through only what the job's
 * {@link EgressPolicy} lists.
 *
 * <p>It understands two requests, both checked against the policy before anything leaves the runner:
 * <ul>
 *   <li>{@code CONNECT host:port}: the proxy resolves the name itself (the sandbox has no DNS), connects,
 *       answers {@code 200 Connection Established} and relays bytes both ways until both sides are done;</li>
 *   <li>plain HTTP in absolute form ({@code GET http://host:port/path}, POST with a body, ...): the proxy
 *       connects, sends the head in origin form ({@code GET /path}) with {@code Host} from the URI, without
 *       {@code Proxy-Authorization}, {@code Proxy-Connection}, {@code Connection} and {@code Keep-Alive},
 *       plus {@code Connection: close}, then relays the rest of the connection (the body, the response) as
 *       is. Each connection is therefore bound to the one admitted target of its first request: anything the
 *       job sends after that head, including a pipelined or kept-alive request naming another host, can
 *       only ever reach that same target, and {@code Connection: close} makes well-behaved clients come back
 *       on a new connection, which is checked again.</li>
 * </ul>
 * Everything else is answered by the proxy and the connection closed: 403 for a target not on the list
 * (body {@code egress to host:port is not allowed for this job}), 400 for a malformed head or an origin-form
 * request, 431 for a head larger than {@link Builder#maxHeadBytes}, 408 for a head not complete within
 * {@link Builder#headTimeout}, 502/504 when the target cannot be resolved or reached, 503 beyond
 * {@link Builder#maxConnections}. The proxy never interprets responses, follows redirects or retries.
 *
 * <p>A listed host name that resolves only to loopback, link-local, wildcard or multicast addresses is
 * refused by default (so a listed name cannot be pointed at the runner's own services); listing the IP
 * literal admits it explicitly. Every attempt that named a target is recorded in the {@link EgressRecorder}.
 *
 * <p>Threading: {@link #start} binds the socket and returns at once. One accept thread hands each
 * connection to a bounded pool of daemon worker threads (two per connection while relaying), so a slow or
 * hostile client only ever holds its own threads. All public methods are thread-safe. {@link #close()} is
 * idempotent, stops accepting, closes every open connection on both sides, waits briefly for the workers to
 * record what they were doing, and deletes the socket file.
 */
public final class EgressProxy implements AutoCloseable {

  /** Default limits: 64 connections, a 64 KiB head read within 30 s, 10 s to connect to the target. */
  public static final int DEFAULT_MAX_CONNECTIONS = 64;
  public static final int DEFAULT_MAX_HEAD_BYTES = 64 * 1024;
  public static final Duration DEFAULT_HEAD_TIMEOUT = Duration.ofSeconds(30);
  public static final Duration DEFAULT_CONNECT_TIMEOUT = Duration.ofSeconds(10);

  private static final System.Logger LOG = System.getLogger(EgressProxy.class.getName());
  private static final AtomicInteger INSTANCES = new AtomicInteger();

  private final Path socketPath;
  private final ProxySettings settings;
  private final ServerSocketChannel server;
  private final Semaphore permits;
  private final Set<ProxyConnection> open = ConcurrentHashMap.newKeySet();
  private final ThreadPoolExecutor workers;
  private final ScheduledThreadPoolExecutor timer;
  private final Thread acceptor;
  private volatile boolean closed;

  private EgressProxy(Path socketPath, ProxySettings settings, ServerSocketChannel server) {
    this.socketPath = socketPath;
    this.settings = settings;
    this.server = server;
    this.permits = new Semaphore(settings.maxConnections());
    String name = "spb-egress-" + INSTANCES.incrementAndGet();
    // Two threads per connection at most (one per direction), plus slack for threads still returning to the pool.
    this.workers = new ThreadPoolExecutor(0, 2 * settings.maxConnections() + 4, 30, TimeUnit.SECONDS,
        new SynchronousQueue<>(), daemonThreads(name + "-worker-"));
    this.timer = new ScheduledThreadPoolExecutor(1, daemonThreads(name + "-timer-"));
    this.timer.setRemoveOnCancelPolicy(true);
    this.acceptor = new Thread(this::acceptLoop, name + "-accept");
    this.acceptor.setDaemon(true);
  }

  /** Starts a proxy with the default limits; see {@link #builder} for the others. */
  public static EgressProxy start(Path socketPath, EgressPolicy policy, EgressRecorder recorder) throws IOException {
    return builder(socketPath, policy).recorder(recorder).start();
  }

  public static Builder builder(Path socketPath, EgressPolicy policy) {
    return new Builder(socketPath, policy);
  }

  public Path socketPath() {
    return socketPath;
  }

  public EgressPolicy policy() {
    return settings.policy();
  }

  public EgressRecorder recorder() {
    return settings.recorder();
  }

  /** Connections currently being served (reading a head, connecting, or relaying). */
  public int openConnections() {
    return open.size();
  }

  @Override
  public void close() {
    synchronized (this) {
      if (closed) {
        return;
      }
      closed = true;
    }
    closeQuietly(server);
    try {
      acceptor.join(2000);
      open.forEach(ProxyConnection::abort);
      timer.shutdownNow();
      workers.shutdown();
      workers.awaitTermination(2, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } finally {
      try {
        Files.deleteIfExists(socketPath);
      } catch (IOException e) {
        LOG.log(System.Logger.Level.WARNING, "cannot delete egress socket " + socketPath, e);
      }
    }
  }

  ProxySettings settings() {
    return settings;
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

  void connectionEnded(ProxyConnection connection) {
    if (open.remove(connection)) {
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
        // Typically out of file descriptors: back off instead of spinning, keep serving.
        LOG.log(System.Logger.Level.WARNING, "egress accept failed on " + socketPath + ": " + e);
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
    ProxyConnection connection = new ProxyConnection(this, client);
    open.add(connection);
    try {
      workers.execute(connection);
    } catch (RejectedExecutionException e) {
      connectionEnded(connection);
      refuseBusy(client);
    }
  }

  /** Answers 503 from the accept thread without ever blocking on it. */
  private static void refuseBusy(SocketChannel client) {
    try (client) {
      client.configureBlocking(false);
      client.write(ByteBuffer.wrap(RejectedRequest.response(503, "too many egress connections for this job")));
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

  private static void closeQuietly(ServerSocketChannel channel) {
    try {
      channel.close();
    } catch (IOException e) {
      LOG.log(System.Logger.Level.DEBUG, "close failed: " + e);
    }
  }

  /** Options for an {@link EgressProxy}; every limit has a safe default. */
  public static final class Builder {

    private final Path socketPath;
    private final EgressPolicy policy;
    private EgressRecorder recorder = new EgressRecorder();
    private int maxConnections = DEFAULT_MAX_CONNECTIONS;
    private int maxHeadBytes = DEFAULT_MAX_HEAD_BYTES;
    private Duration headTimeout = DEFAULT_HEAD_TIMEOUT;
    private Duration connectTimeout = DEFAULT_CONNECT_TIMEOUT;
    private boolean refuseLocalResolutions = true;

    private Builder(Path socketPath, EgressPolicy policy) {
      this.socketPath = Objects.requireNonNull(socketPath, "socketPath");
      this.policy = Objects.requireNonNull(policy, "policy");
    }

    public Builder recorder(EgressRecorder recorder) {
      this.recorder = Objects.requireNonNull(recorder, "recorder");
      return this;
    }

    /** Connections served at once; the next ones get 503 until one ends. */
    public Builder maxConnections(int maxConnections) {
      this.maxConnections = requirePositive(maxConnections, "maxConnections");
      return this;
    }

    /** Largest request head (request line and headers); a larger one gets 431. */
    public Builder maxHeadBytes(int maxHeadBytes) {
      this.maxHeadBytes = requirePositive(maxHeadBytes, "maxHeadBytes");
      return this;
    }

    /** Time from accepting a connection to its complete request head; a slower client gets 408. */
    public Builder headTimeout(Duration headTimeout) {
      this.headTimeout = requirePositive(headTimeout, "headTimeout");
      return this;
    }

    /** Time to connect to the target, over all its addresses; beyond it the job gets 504. */
    public Builder connectTimeout(Duration connectTimeout) {
      this.connectTimeout = requirePositive(connectTimeout, "connectTimeout");
      return this;
    }

    /**
     * Whether a listed host name is refused when it resolves only to loopback, link-local, wildcard or
     * multicast addresses (default true; such addresses are skipped when others exist). IP literals on the
     * list are never affected.
     */
    public Builder refuseLocalResolutions(boolean refuse) {
      this.refuseLocalResolutions = refuse;
      return this;
    }

    /**
     * Binds the socket (which must not exist yet: the runner gives each job a fresh directory), makes it
     * mode 0666 so the container's unprivileged user can connect, and starts accepting. A bind mount of the
     * socket file pins the old socket: if a proxy may be restarted under a running container, mount the
     * directory instead.
     */
    public EgressProxy start() throws IOException {
      ProxySettings settings = new ProxySettings(policy, recorder, maxConnections, maxHeadBytes, headTimeout,
          connectTimeout, refuseLocalResolutions);
      ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
      boolean bound = false;
      try {
        server.bind(UnixDomainSocketAddress.of(socketPath), maxConnections);
        bound = true;
        Files.setPosixFilePermissions(socketPath, PosixFilePermissions.fromString("rw-rw-rw-"));
        EgressProxy proxy = new EgressProxy(socketPath, settings, server);
        proxy.acceptor.start();
        LOG.log(System.Logger.Level.INFO, "egress proxy on " + socketPath + " admits " + policy.entries());
        return proxy;
      } catch (IOException | RuntimeException e) {
        closeQuietly(server);
        if (bound) {
          Files.deleteIfExists(socketPath);
        }
        throw e;
      }
    }

    private static int requirePositive(int value, String name) {
      if (value < 1) {
        throw new IllegalArgumentException(name + " must be at least 1");
      }
      return value;
    }

    private static Duration requirePositive(Duration value, String name) {
      if (value == null || value.isNegative() || value.isZero()) {
        throw new IllegalArgumentException(name + " must be positive");
      }
      return value;
    }
  }
}
