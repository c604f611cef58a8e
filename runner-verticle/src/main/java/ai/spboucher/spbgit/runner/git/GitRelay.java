package ai.spboucher.spbgit.runner.git;

import ai.spboucher.spbgit.runner.egress.EgressRecord;
import ai.spboucher.spbgit.runner.sockets.JobSocketServer;
import ai.spboucher.spbgit.runner.sockets.PlainAnswer;
import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Base64;
import java.util.Locale;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadPoolExecutor;
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

  private final Origin origin;
  private final GitRoute route;
  private final String authorization;
  private final Consumer<? super EgressRecord> listener;
  private final JobSocketServer server;

  /** Where the relay sends what it admits: the scheme, host and port of the clone URL. */
  record Origin(boolean tls, String host, int port, SSLSocketFactory tlsFactory) {

    /** {@code host} or {@code host:port} when the port is not the scheme's default, as the Host header wants. */
    String authority() {
      String name = host.contains(":") ? "[" + host + "]" : host;
      return port == (tls ? 443 : 80) ? name : name + ":" + port;
    }
  }

  private GitRelay(Origin origin, GitRoute route, String authorization, Consumer<? super EgressRecord> listener,
                   JobSocketServer server) {
    this.origin = origin;
    this.route = route;
    this.authorization = authorization;
    this.listener = listener;
    this.server = server;
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
    JobSocketServer server = JobSocketServer.bind(socketPath, "git", MAX_CONNECTIONS, 2,
        PlainAnswer.of(503, "too many connections to the git relay"));
    GitRelay relay = new GitRelay(origin, route, authorization, listener, server);
    server.serve(client -> new GitExchange(relay, client));
    return relay;
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
    return server.socketPath();
  }

  /** The clone URL's path: where the container's git finds the repository behind the relay. */
  public String repoPath() {
    return route.repoPath();
  }

  @Override
  public void close() {
    server.close();
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
    return server.workers();
  }

  ScheduledThreadPoolExecutor timer() {
    return server.timer();
  }

  boolean isClosed() {
    return server.isClosed();
  }

  void record(EgressRecord record) {
    try {
      listener.accept(record);
    } catch (RuntimeException e) {
      LOG.log(System.Logger.Level.WARNING, "git relay listener failed", e);
    }
  }
}
