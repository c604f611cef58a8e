package ai.spboucher.spbgit.runner.nats;

import ai.spboucher.spbgit.common.NatsSettings;
import ai.spboucher.spbgit.proto.Streams;
import io.nats.client.Connection;
import io.nats.client.JetStream;
import io.nats.client.JetStreamApiException;
import io.nats.client.JetStreamManagement;
import io.nats.client.Nats;
import io.nats.client.Options;
import java.io.IOException;
import java.security.GeneralSecurityException;
import java.time.Duration;

/**
 * The runner's NATS connection. It reconnects forever (a runner outlives NATS restarts) and makes
 * sure the protocol's streams exist. Connecting blocks: call {@link #connect} from a worker thread.
 */
public final class NatsLink implements AutoCloseable {

  private final Connection connection;
  private final JetStream jetStream;
  private final JetStreamManagement management;
  private final Duration jobAckWait;

  private NatsLink(Connection connection, Duration jobAckWait) throws IOException {
    this.connection = connection;
    this.jobAckWait = jobAckWait;
    this.jetStream = connection.jetStream();
    this.management = connection.jetStreamManagement();
  }

  /**
   * Connects with the settings read at start-up ({@link NatsSettings}). Refused credentials fail at
   * once; an unreachable server is retried for a minute, after which the runner gives up rather
   * than pretend to be ready.
   */
  public static NatsLink connect(NatsSettings nats, String name)
      throws IOException, InterruptedException {
    String url = nats.url();
    Options options;
    try {
      options =
          nats.options()
              .connectionName(name)
              .maxReconnects(-1)
              .reconnectWait(Duration.ofMillis(500))
              .build();
    } catch (GeneralSecurityException e) {
      throw new IOException("cannot set up TLS for NATS: " + e.getMessage(), e);
    }
    IOException last = null;
    for (int attempt = 0; attempt < 60; attempt++) {
      try {
        return new NatsLink(Nats.connect(options), nats.jobAckWait());
      } catch (IOException e) {
        if (NatsSettings.isAuthorizationFailure(e)) {
          throw new IOException("NATS at " + url + " refused this runner's credentials", e);
        }
        last = e;
        Thread.sleep(1000);
      }
    }
    throw new IOException("NATS at " + url + " is unreachable: " + last.getMessage(), last);
  }

  /**
   * Creates or updates the streams; call after connecting and again after a failed fetch. Blocking.
   */
  public void ensureStreams() throws IOException, JetStreamApiException {
    Streams.ensure(connection.jetStreamManagement(), Streams.EVENT_RETENTION, 1, jobAckWait, false);
  }

  /**
   * Creates {@code image}'s job consumer with the configured ack wait if it is missing (an existing
   * one is left as it is). Blocking.
   */
  public void ensureRunnersConsumer(String image) throws IOException, JetStreamApiException {
    Streams.ensureRunnersConsumer(management, image, jobAckWait, false);
  }

  public Connection connection() {
    return connection;
  }

  public JetStream jetStream() {
    return jetStream;
  }

  public JetStreamManagement management() {
    return management;
  }

  @Override
  public void close() throws InterruptedException {
    connection.close();
  }
}
