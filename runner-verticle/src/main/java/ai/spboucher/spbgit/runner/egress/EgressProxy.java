package ai.spboucher.spbgit.runner.egress;

import ai.spboucher.spbgit.common.Settings;
import ai.spboucher.spbgit.runner.sockets.JobSocket;
import ai.spboucher.spbgit.runner.sockets.Refusal;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpVersion;
import io.vertx.core.net.NetClient;
import io.vertx.core.net.NetClientOptions;
import io.vertx.core.net.NetSocket;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The only way out of a job's sandbox: an HTTP proxy listening on a unix domain socket that is
 * mounted into the container (which runs with {@code --network none}), letting through only what
 * the job's {@link EgressPolicy} lists.
 *
 * <p>It understands two requests, both checked against the policy before anything leaves the
 * runner:
 *
 * <ul>
 *   <li>{@code CONNECT host:port}: the proxy resolves the name itself (the sandbox has no DNS),
 *       connects, answers {@code 200 Connection Established} and relays bytes both ways until both
 *       sides are done;
 *   <li>plain HTTP in absolute form ({@code GET http://host:port/path}, POST with a body, ...): the
 *       proxy connects, sends the head in origin form ({@code GET /path}) with {@code Host} from
 *       the URI, without {@code Proxy-Authorization}, {@code Proxy-Connection}, {@code Connection}
 *       and {@code Keep-Alive}, plus {@code Connection: close}, then relays the rest of the
 *       connection (the body, the response) as is. Each connection is therefore bound to the one
 *       admitted target of its first request: anything the job sends after that head, including a
 *       pipelined or kept-alive request naming another host, can only ever reach that same target,
 *       and {@code Connection: close} makes well-behaved clients come back on a new connection,
 *       which is checked again.
 * </ul>
 *
 * Everything else is answered by the proxy and the connection closed: 403 for a target not on the
 * list (body {@code egress to host:port is not allowed for this job}), 400 for a malformed head or
 * an origin-form request, 431 for a head larger than {@link Builder#maxHeadBytes}, 408 for a head
 * not complete within {@link Builder#headTimeout}, 502/504 when the target cannot be resolved or
 * reached, 503 beyond {@link Builder#maxConnections}. The proxy never interprets responses, follows
 * redirects or retries.
 *
 * <p>A listed host name that resolves only to loopback, link-local, wildcard or multicast addresses
 * is refused by default (so a listed name cannot be pointed at the runner's own services); listing
 * the IP literal admits it explicitly. Every attempt that named a target is recorded in the {@link
 * EgressRecorder}.
 *
 * <p>Threading: {@link #start} binds the socket (Vert.x's HTTP server, see {@link JobSocket}) and
 * returns at once. Heads are parsed, tunnels and requests relayed on the server's event loop with
 * Vert.x's TCP and HTTP clients, with back-pressure; only the name resolution, which blocks, runs
 * on a worker. All public methods are thread-safe. {@link #close()} blocks briefly and is
 * idempotent: it stops accepting, closes every open connection on both sides, and deletes the
 * socket file.
 */
public final class EgressProxy implements AutoCloseable {

  /**
   * Default limits: 64 connections, a 64 KiB head read within 30 s, 10 s to connect to the target.
   */
  public static final int DEFAULT_MAX_CONNECTIONS = 64;

  public static final int DEFAULT_MAX_HEAD_BYTES = 64 * 1024;
  public static final Duration DEFAULT_HEAD_TIMEOUT = Duration.ofSeconds(30);
  public static final Duration DEFAULT_CONNECT_TIMEOUT = Duration.ofSeconds(10);

  private static final System.Logger LOG = System.getLogger(EgressProxy.class.getName());

  private final Vertx vertx;
  private final ProxySettings settings;
  private final NetClient tcp;
  private final HttpClient http11;
  private final HttpClient http10;

  /** Both sides of every open tunnel, closed by {@link #close()}. */
  private final Set<NetSocket> tunnels = ConcurrentHashMap.newKeySet();

  private JobSocket server;

  private EgressProxy(Vertx vertx, ProxySettings settings) {
    this.vertx = vertx;
    this.settings = settings;
    int connectMillis = (int) Math.min(settings.connectTimeout().toMillis(), Integer.MAX_VALUE);
    this.tcp =
        vertx.createNetClient(
            new NetClientOptions().setConnectTimeout(connectMillis).setTcpNoDelay(true));
    HttpClientOptions http =
        new HttpClientOptions()
            .setKeepAlive(false)
            .setConnectTimeout(connectMillis)
            .setDecompressionSupported(false)
            .setMaxInitialLineLength(settings.maxHeadBytes())
            .setMaxHeaderSize(settings.maxHeadBytes());
    this.http11 = vertx.createHttpClient(http);
    this.http10 =
        vertx.createHttpClient(
            new HttpClientOptions(http).setProtocolVersion(HttpVersion.HTTP_1_0));
  }

  /** Starts a proxy with the default limits; see {@link #builder} for the others. */
  public static EgressProxy start(
      Vertx vertx, Path socketPath, EgressPolicy policy, EgressRecorder recorder)
      throws IOException {
    return builder(vertx, socketPath, policy).recorder(recorder).start();
  }

  public static Builder builder(Vertx vertx, Path socketPath, EgressPolicy policy) {
    return new Builder(vertx, socketPath, policy);
  }

  public Path socketPath() {
    return server.socketPath();
  }

  public EgressPolicy policy() {
    return settings.policy();
  }

  public EgressRecorder recorder() {
    return settings.recorder();
  }

  /** Connections currently being served (reading a head, connecting, or relaying). */
  public int openConnections() {
    return server.openConnections();
  }

  @Override
  public void close() {
    if (server != null) {
      server.close();
    }
    tunnels.forEach(NetSocket::close);
    tcp.close();
    http11.close();
    http10.close();
  }

  Vertx vertx() {
    return vertx;
  }

  ProxySettings settings() {
    return settings;
  }

  NetClient tcp() {
    return tcp;
  }

  HttpClient http(HttpVersion version) {
    return version == HttpVersion.HTTP_1_0 ? http10 : http11;
  }

  /** Keeps {@code socket} until it closes, so that {@link #close()} can end its tunnel. */
  void track(NetSocket socket) {
    tunnels.add(socket);
    socket.closeHandler(v -> tunnels.remove(socket));
  }

  /** Options for an {@link EgressProxy}; every limit has a safe default. */
  public static final class Builder {

    private final Vertx vertx;
    private final Path socketPath;
    private final EgressPolicy policy;
    private EgressRecorder recorder = new EgressRecorder();
    private int maxConnections = DEFAULT_MAX_CONNECTIONS;
    private int maxHeadBytes = DEFAULT_MAX_HEAD_BYTES;
    private Duration headTimeout = DEFAULT_HEAD_TIMEOUT;
    private Duration connectTimeout = DEFAULT_CONNECT_TIMEOUT;
    private boolean refuseLocalResolutions = true;

    private Builder(Vertx vertx, Path socketPath, EgressPolicy policy) {
      this.vertx = Objects.requireNonNull(vertx, "vertx");
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
      this.headTimeout = Settings.positive("headTimeout", headTimeout);
      return this;
    }

    /** Time to connect to the target, over all its addresses; beyond it the job gets 504. */
    public Builder connectTimeout(Duration connectTimeout) {
      this.connectTimeout = Settings.positive("connectTimeout", connectTimeout);
      return this;
    }

    /**
     * Whether a listed host name is refused when it resolves only to loopback, link-local, wildcard
     * or multicast addresses (default true; such addresses are skipped when others exist). IP
     * literals on the list are never affected.
     */
    public Builder refuseLocalResolutions(boolean refuse) {
      this.refuseLocalResolutions = refuse;
      return this;
    }

    /**
     * Binds the socket (which must not exist yet: the runner gives each job a fresh directory),
     * makes it mode 0666 so the container's unprivileged user can connect, and starts accepting. A
     * bind mount of the socket file pins the old socket: if a proxy may be restarted under a
     * running container, mount the directory instead.
     */
    public EgressProxy start() throws IOException {
      ProxySettings settings =
          new ProxySettings(
              policy,
              recorder,
              maxConnections,
              maxHeadBytes,
              headTimeout,
              connectTimeout,
              refuseLocalResolutions);
      EgressProxy proxy = new EgressProxy(vertx, settings);
      try {
        proxy.server =
            JobSocket.bind(
                vertx,
                socketPath,
                new JobSocket.Limits(maxConnections, maxHeadBytes, headTimeout),
                JobSocket.Answers.PLAIN_TEXT,
                new Refusal(503, "busy", "too many egress connections for this job"),
                request -> ProxyExchange.serve(proxy, request),
                refusal -> {});
      } catch (IOException | RuntimeException e) {
        proxy.close();
        throw e;
      }
      LOG.log(
          System.Logger.Level.INFO,
          "egress proxy on " + socketPath + " admits " + policy.entries());
      return proxy;
    }

    private static int requirePositive(int value, String name) {
      if (value < 1) {
        throw new IllegalArgumentException(name + " must be at least 1");
      }
      return value;
    }
  }
}
