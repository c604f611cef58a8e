package ai.spboucher.spbgit.common;

import io.nats.client.Nats;
import io.nats.client.Options;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.time.Duration;
import java.util.Map;

/**
 * How the gateway and the runners connect to NATS, from the same {@code SPB_NATS_*} environment variables:
 * {@code SPB_NATS_URL} ({@code nats://} or {@code tls://}), {@code SPB_NATS_CREDS} (a {@code .creds} file: JWT
 * and nkey seed), or {@code SPB_NATS_USER} with {@code SPB_NATS_PASSWORD} / {@code SPB_NATS_PASSWORD_FILE},
 * and {@code SPB_NATS_CA} (a PEM file of the CA that signed the server's certificate, for {@code tls://}).
 * Reading the files blocks.
 */
public final class NatsClientOptions {

  private NatsClientOptions() {
  }

  /** A builder with the server, authentication and TLS set; callers add their name and reconnect policy. */
  public static Options.Builder from(Map<String, String> env, String defaultUrl)
      throws IOException, GeneralSecurityException {
    String url = env.getOrDefault("SPB_NATS_URL", defaultUrl);
    Options.Builder builder = new Options.Builder().server(url).connectionTimeout(Duration.ofSeconds(5))
        .errorListener(new QuietErrorListener());
    String creds = env.get("SPB_NATS_CREDS");
    String user = env.get("SPB_NATS_USER");
    if (creds != null && !creds.isBlank()) {
      if (!Files.isReadable(Path.of(creds))) {
        throw new IOException("SPB_NATS_CREDS file is not readable: " + creds);
      }
      builder.authHandler(Nats.credentials(creds));
    } else if (user != null && !user.isBlank()) {
      builder.userInfo(user, password(env));
    }
    String ca = env.get("SPB_NATS_CA");
    if (ca != null && !ca.isBlank()) {
      builder.sslContext(PemTrust.sslContext(Path.of(ca)));
    } else if (url.startsWith("tls://")) {
      builder.secure();
    }
    return builder;
  }

  /** Logs the first failure of a series, then at most once a minute, instead of one line per retry. */
  static final class QuietErrorListener implements io.nats.client.ErrorListener {
    private static final System.Logger LOG = System.getLogger(NatsClientOptions.class.getName());
    private volatile long lastLogged;

    @Override
    public void exceptionOccurred(io.nats.client.Connection conn, Exception exp) {
      long now = System.currentTimeMillis();
      if (now - lastLogged > 60_000) {
        lastLogged = now;
        LOG.log(System.Logger.Level.WARNING, "NATS: " + exp.getMessage() + " (retrying; logged once a minute)");
      }
    }
  }

  /** Whether a connection failure means the server refused the credentials (retrying will not help). */
  public static boolean isAuthorizationFailure(Throwable e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      String message = t.getMessage();
      if (message != null && message.toLowerCase().contains("authorization violation")) {
        return true;
      }
    }
    return false;
  }

  private static String password(Map<String, String> env) throws IOException {
    String file = env.get("SPB_NATS_PASSWORD_FILE");
    if (file != null && !file.isBlank()) {
      return Files.readString(Path.of(file), StandardCharsets.UTF_8).strip();
    }
    return env.getOrDefault("SPB_NATS_PASSWORD", "");
  }


}
