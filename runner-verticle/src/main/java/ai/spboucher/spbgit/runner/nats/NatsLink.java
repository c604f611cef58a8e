package ai.spboucher.spbgit.runner.nats;

import ai.spboucher.spbgit.proto.Streams;
import io.nats.client.Connection;
import io.nats.client.JetStream;
import io.nats.client.JetStreamApiException;
import io.nats.client.Nats;
import io.nats.client.Options;
import java.io.IOException;
import java.time.Duration;

/**
 * The runner's NATS connection. It reconnects forever (a runner outlives NATS restarts) and makes sure the
 * protocol's streams exist. Connecting blocks: call {@link #connect} from a worker thread.
 */
public final class NatsLink implements AutoCloseable {


  private final Connection connection;
  private final JetStream jetStream;

  private NatsLink(Connection connection) throws IOException {
    this.connection = connection;
    this.jetStream = connection.jetStream();
  }

  public static NatsLink connect(String url, String name) throws IOException, InterruptedException {
    Options options = new Options.Builder()
        .server(url)
        .connectionName(name)
        .maxReconnects(-1)
        .reconnectWait(Duration.ofMillis(500))
        .connectionTimeout(Duration.ofSeconds(5))
        .build();
    return new NatsLink(Nats.connectReconnectOnConnect(options));
  }

  /** Creates or updates the streams; call after connecting and again after a failed fetch. Blocking. */
  public void ensureStreams() throws IOException, JetStreamApiException {
    Streams.ensure(connection.jetStreamManagement(), Streams.EVENT_RETENTION, 1, false);
  }

  public Connection connection() {
    return connection;
  }

  public JetStream jetStream() {
    return jetStream;
  }

  @Override
  public void close() throws InterruptedException {
    connection.close();
  }
}
