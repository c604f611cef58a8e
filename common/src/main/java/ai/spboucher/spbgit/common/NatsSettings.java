package ai.spboucher.spbgit.common;

import io.nats.client.Connection;
import io.nats.client.ErrorListener;
import io.nats.client.Nats;
import io.nats.client.Options;
import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.time.Duration;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * How the gateway and the runners connect to NATS, read once at start-up from the same {@code
 * SPB_NATS_*} environment variables: {@code SPB_NATS_URL} ({@code nats://} or {@code tls://},
 * several comma-separated), {@code SPB_NATS_CREDS} (a {@code .creds} file: JWT and nkey seed), or
 * {@code SPB_NATS_USER} with {@code SPB_NATS_PASSWORD} / {@code SPB_NATS_PASSWORD_FILE}, and {@code
 * SPB_NATS_CA} (a PEM file of the CA that signed the server's certificate, for {@code tls://}), and
 * {@code SPB_JOB_ACK_WAIT}: how long a job request delivered to a runner waits for its
 * acknowledgement before JetStream delivers it again. Both sides read it because whichever connects
 * first creates the job consumers; the gateway also applies it to the default image's consumer that
 * exists. {@link #toString()} leaves the password out.
 *
 * @param url the server URL or URLs
 * @param credsFile the {@code .creds} file, or null
 * @param user the user name, or null
 * @param password the user's password ({@code SPB_NATS_PASSWORD_FILE} already read), empty without
 *     one
 * @param caFile the CA certificate to trust, or null for the JDK's CAs
 * @param jobAckWait the job consumers' ack wait, from 1 s to 1 h
 */
public record NatsSettings(
    String url, Path credsFile, String user, String password, Path caFile, Duration jobAckWait) {

  public static final String DEFAULT_URL = "nats://127.0.0.1:4222";

  /** The variables {@link #fromEnvironment} reads. */
  public static final List<String> VARIABLES =
      List.of(
          "SPB_NATS_URL",
          "SPB_NATS_CREDS",
          "SPB_NATS_USER",
          "SPB_NATS_PASSWORD",
          "SPB_NATS_PASSWORD_FILE",
          "SPB_NATS_CA",
          "SPB_JOB_ACK_WAIT");

  /** The keys of {@link #VARIABLES} in the gateway's and the runner's JSON configuration. */
  public static final Map<String, String> JSON_KEYS =
      Map.of(
          "SPB_NATS_URL", "natsUrl",
          "SPB_NATS_CREDS", "natsCreds",
          "SPB_NATS_USER", "natsUser",
          "SPB_NATS_PASSWORD", "natsPassword",
          "SPB_NATS_PASSWORD_FILE", "natsPasswordFile",
          "SPB_NATS_CA", "natsCa",
          "SPB_JOB_ACK_WAIT", "jobAckWait");

  /**
   * The default {@code SPB_JOB_ACK_WAIT}. A runner acks a job as soon as it takes it; this only
   * covers a runner dying between fetch and ack.
   */
  public static final Duration DEFAULT_JOB_ACK_WAIT = Duration.ofSeconds(30);

  public NatsSettings {
    if (url == null || !url.matches("(nats|tls)://.+")) {
      throw new IllegalArgumentException(
          "SPB_NATS_URL must be a nats:// or tls:// URL, got " + url);
    }
    requireReadable("SPB_NATS_CREDS", credsFile);
    requireReadable("SPB_NATS_CA", caFile);
    if (jobAckWait.toSeconds() < 1 || jobAckWait.compareTo(Duration.ofHours(1)) > 0) {
      throw new IllegalArgumentException("SPB_JOB_ACK_WAIT must be between 1s and 1h");
    }
    user = user == null || user.isBlank() ? null : user;
    password = password == null ? "" : password;
  }

  /** {@link #JSON_KEYS} and a process's {@code others}, variable by variable. */
  @SafeVarargs
  public static Map<String, String> withJsonKeys(Map.Entry<String, String>... others) {
    Map<String, String> all = new HashMap<>(JSON_KEYS);
    for (Map.Entry<String, String> entry : others) {
      if (all.put(entry.getKey(), entry.getValue()) != null) {
        throw new IllegalArgumentException("duplicate variable " + entry.getKey());
      }
    }
    return Map.copyOf(all);
  }

  /**
   * Reads and checks the {@code SPB_NATS_*} variables (unset ones take their defaults), and the
   * password file: blocking. Fails with a message naming the variable on a malformed URL or a file
   * it cannot read.
   */
  public static NatsSettings fromEnvironment(Map<String, String> env) {
    Settings settings = Settings.keepingEmpty(env);
    return new NatsSettings(
        settings.text("SPB_NATS_URL", DEFAULT_URL),
        settings.path("SPB_NATS_CREDS", null),
        settings.verbatim("SPB_NATS_USER", null),
        password(settings),
        settings.path("SPB_NATS_CA", null),
        Settings.of(env).duration("SPB_JOB_ACK_WAIT", DEFAULT_JOB_ACK_WAIT));
  }

  /**
   * A builder with the server, authentication and TLS set; callers add their name and reconnect
   * policy. Reads the creds and CA files: blocking.
   */
  public Options.Builder options() throws IOException, GeneralSecurityException {
    Options.Builder builder =
        new Options.Builder()
            .server(url)
            .connectionTimeout(Duration.ofSeconds(5))
            .errorListener(new QuietErrorListener());
    if (credsFile != null) {
      builder.authHandler(Nats.credentials(credsFile.toString()));
    } else if (user != null) {
      builder.userInfo(user, password);
    }
    if (caFile != null) {
      builder.sslContext(PemTrust.sslContext(caFile));
    } else if (url.startsWith("tls://")) {
      builder.secure();
    }
    return builder;
  }

  /**
   * Whether every server of {@link #url} is on this machine (a loopback address). NATS lives on the
   * gateway's node, so a runner given only such servers shares that node: fine for trying the
   * product out, not for production, where a job container that escaped would sit next to the
   * forge's data.
   */
  public boolean onThisMachine() {
    return Arrays.stream(url.split(","))
        .map(String::strip)
        .filter(s -> !s.isEmpty())
        .allMatch(u -> isLoopbackHost(u.contains("://") ? u : "nats://" + u));
  }

  private static boolean isLoopbackHost(String url) {
    String host;
    try {
      host = URI.create(url).getHost();
    } catch (IllegalArgumentException e) {
      return false;
    }
    if (host == null) {
      return false;
    }
    String bare = host.startsWith("[") ? host.substring(1, host.length() - 1) : host;
    return "localhost".equalsIgnoreCase(bare)
        || bare.matches("127(\\.\\d{1,3}){3}")
        || "::1".equals(bare)
        || "0:0:0:0:0:0:0:1".equals(bare);
  }

  @Override
  public String toString() {
    return "NatsSettings[url="
        + url
        + ", credsFile="
        + credsFile
        + ", user="
        + user
        + ", password="
        + (password.isEmpty() ? "" : "(set)")
        + ", caFile="
        + caFile
        + ", jobAckWait="
        + jobAckWait
        + "]";
  }

  /**
   * Logs the first failure of a series, then at most once a minute, instead of one line per retry.
   */
  static final class QuietErrorListener implements ErrorListener {
    private static final System.Logger LOG = System.getLogger(NatsSettings.class.getName());
    private volatile long lastLogged;

    @Override
    public void exceptionOccurred(Connection conn, Exception exp) {
      long now = System.currentTimeMillis();
      if (now - lastLogged > 60_000) {
        lastLogged = now;
        LOG.log(
            System.Logger.Level.WARNING,
            "NATS: " + exp.getMessage() + " (retrying; logged once a minute)");
      }
    }
  }

  /**
   * Whether a connection failure means the server refused the credentials (retrying will not help).
   */
  public static boolean isAuthorizationFailure(Throwable e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      String message = t.getMessage();
      if (message != null && message.toLowerCase().contains("authorization violation")) {
        return true;
      }
    }
    return false;
  }

  private static void requireReadable(String variable, Path file) {
    if (file != null && !Files.isReadable(file)) {
      throw new IllegalArgumentException(variable + " file is not readable: " + file);
    }
  }

  private static String password(Settings settings) {
    Path file = settings.path("SPB_NATS_PASSWORD_FILE", null);
    if (file == null) {
      return settings.verbatim("SPB_NATS_PASSWORD", "");
    }
    try {
      return Files.readString(file, StandardCharsets.UTF_8).strip();
    } catch (IOException e) {
      throw new IllegalArgumentException("SPB_NATS_PASSWORD_FILE file is not readable: " + file, e);
    }
  }
}
