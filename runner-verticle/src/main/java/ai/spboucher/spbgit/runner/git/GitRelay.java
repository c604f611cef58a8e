package ai.spboucher.spbgit.runner.git;

import ai.spboucher.spbgit.runner.egress.EgressRecord;
import ai.spboucher.spbgit.runner.sockets.JobSocket;
import ai.spboucher.spbgit.runner.sockets.Refusal;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.PoolOptions;
import io.vertx.core.net.TrustOptions;
import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Base64;
import java.util.Locale;
import java.util.Objects;
import java.util.Set;
import java.util.function.Consumer;

/**
 * A job's only way to its repository, and the holder of its job token: an HTTP endpoint on a unix
 * domain socket in the job's egress directory (mounted into the container at {@code
 * /run/spb/git.sock}) that forwards the smart-HTTP requests of the job's one repository to the
 * gateway, adding the job token as Basic credentials. The token never enters the container, so
 * nothing the job runs can read it: not from its environment, not from {@code /proc/1/environ}, not
 * from a file.
 *
 * <p>One request per connection. Only what {@link GitRoute} admits is forwarded (info/refs,
 * upload-pack and receive-pack of the clone URL's path, in origin form); everything else is
 * answered {@code 403} in plain text, which git prints. The request sent upstream is rebuilt: the
 * origin's {@code Host}, {@code Authorization: Basic} with the token (any credentials the job sent
 * are dropped), {@code Connection: close}, and only the request headers git needs; the body is
 * streamed as sent, and so is the gateway's answer. Anything the job pipelines after the first
 * request is never read: the connection closes after the answer. What the token may do is still
 * decided by the gateway's pre-receive gate: this relay narrows the path, it does not widen the
 * scope.
 *
 * <p>Every request that got as far as a parsed head is passed to the listener as an {@link
 * EgressRecord} of the gateway's {@code host:port}, allowed or refused.
 *
 * <p>Threading: {@link #start} binds the socket (Vert.x's HTTP server, see {@link JobSocket}) and
 * returns; requests are relayed on the server's event loop with Vert.x's HTTP client, nothing
 * blocks. The listener is called on the event loop, possibly from several at once: it must be
 * thread-safe and must not block. {@link #close()} blocks briefly and is idempotent: it stops
 * accepting, cuts open connections and deletes the socket file.
 */
public final class GitRelay implements AutoCloseable {

  /** The socket's file name in the job's egress directory. */
  public static final String SOCKET_NAME = "git.sock";

  static final int MAX_CONNECTIONS = 8;
  static final int MAX_HEAD_BYTES = 64 << 10;
  static final Duration HEAD_TIMEOUT = Duration.ofSeconds(30);
  static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(10);

  /**
   * The request headers a git client needs; anything else (cookies, credentials, hop-by-hop) stays
   * behind.
   */
  static final Set<String> FORWARDED_HEADERS =
      Set.of(
          "accept",
          "accept-encoding",
          "accept-language",
          "content-type",
          "content-encoding",
          "user-agent",
          "git-protocol",
          "pragma");

  private static final System.Logger LOG = System.getLogger(GitRelay.class.getName());

  private final Origin origin;
  private final GitRoute route;
  private final String authorization;
  private final Consumer<? super EgressRecord> listener;
  private final HttpClient gateway;
  private JobSocket server;

  /** Where the relay sends what it admits: the scheme, host and port of the clone URL. */
  record Origin(boolean tls, String host, int port) {

    /**
     * {@code host} or {@code host:port} when the port is not the scheme's default, as the Host
     * header wants.
     */
    String authority() {
      String name = host.contains(":") ? "[" + host + "]" : host;
      return port == (tls ? 443 : 80) ? name : name + ":" + port;
    }
  }

  private GitRelay(
      Origin origin,
      GitRoute route,
      String authorization,
      Consumer<? super EgressRecord> listener,
      HttpClient gateway) {
    this.origin = origin;
    this.route = route;
    this.authorization = authorization;
    this.listener = listener;
    this.gateway = gateway;
  }

  /**
   * Binds {@code socketPath} (which must not exist) with mode 0666, so the container's unprivileged
   * user can connect, and starts serving.
   *
   * @param cloneUrl the repository's clone URL at the gateway ({@code http} or {@code https}, no
   *     credentials)
   * @param jobToken the job's token, sent to the gateway only
   * @param gatewayTrust the CAs an {@code https} gateway's certificate is checked against (with its
   *     host name); null for the JDK's default trust store
   */
  public static GitRelay start(
      Vertx vertx,
      Path socketPath,
      URI cloneUrl,
      String jobToken,
      TrustOptions gatewayTrust,
      Consumer<? super EgressRecord> listener)
      throws IOException {
    Objects.requireNonNull(listener, "listener");
    Origin origin = originOf(cloneUrl);
    GitRoute route = new GitRoute(cloneUrl.getRawPath());
    String authorization =
        "Basic "
            + Base64.getEncoder()
                .encodeToString(("agent:" + jobToken).getBytes(StandardCharsets.UTF_8));
    HttpClientOptions options =
        new HttpClientOptions()
            .setKeepAlive(false)
            .setConnectTimeout((int) CONNECT_TIMEOUT.toMillis())
            .setDecompressionSupported(false)
            .setSsl(origin.tls());
    if (origin.tls()) {
      options.setVerifyHost(true).setTrustOptions(gatewayTrust);
    }
    HttpClient gateway =
        vertx.createHttpClient(options, new PoolOptions().setHttp1MaxSize(MAX_CONNECTIONS));
    GitRelay relay = new GitRelay(origin, route, authorization, listener, gateway);
    try {
      relay.server =
          JobSocket.bind(
              vertx,
              socketPath,
              new JobSocket.Limits(MAX_CONNECTIONS, MAX_HEAD_BYTES, HEAD_TIMEOUT),
              JobSocket.Answers.PLAIN_TEXT,
              new Refusal(503, "busy", "too many connections to the git relay"),
              request -> GitExchange.serve(relay, request),
              refusal -> {});
    } catch (IOException | RuntimeException e) {
      gateway.close();
      throw e;
    }
    return relay;
  }

  static Origin originOf(URI cloneUrl) {
    String scheme =
        cloneUrl.getScheme() == null ? "" : cloneUrl.getScheme().toLowerCase(Locale.ROOT);
    if (!scheme.equals("http") && !scheme.equals("https")) {
      throw new IllegalArgumentException("clone URL must be http or https: " + cloneUrl);
    }
    if (cloneUrl.getRawUserInfo() != null
        || cloneUrl.getRawQuery() != null
        || cloneUrl.getHost() == null) {
      throw new IllegalArgumentException(
          "clone URL must name a host and carry no credentials or query: " + cloneUrl);
    }
    boolean secure = scheme.equals("https");
    String host =
        cloneUrl.getHost().startsWith("[")
            ? cloneUrl.getHost().substring(1, cloneUrl.getHost().length() - 1)
            : cloneUrl.getHost();
    return new Origin(
        secure, host, cloneUrl.getPort() > 0 ? cloneUrl.getPort() : secure ? 443 : 80);
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
    gateway.close();
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

  HttpClient gateway() {
    return gateway;
  }

  void record(EgressRecord record) {
    try {
      listener.accept(record);
    } catch (RuntimeException e) {
      LOG.log(System.Logger.Level.WARNING, "git relay listener failed", e);
    }
  }
}
