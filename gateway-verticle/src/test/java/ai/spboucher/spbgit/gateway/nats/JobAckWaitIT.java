package ai.spboucher.spbgit.gateway.nats;

import static org.junit.jupiter.api.Assertions.assertEquals;

import ai.spboucher.spbgit.common.NatsSettings;
import ai.spboucher.spbgit.proto.Streams;
import ai.spboucher.spbgit.proto.Subjects;
import ai.spboucher.spbgit.testsupport.NatsServerProcess;
import io.nats.client.Connection;
import io.nats.client.JetStreamManagement;
import io.nats.client.Nats;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code SPB_JOB_ACK_WAIT} reaches the job consumer on a real NATS: the first to connect creates it
 * with its value, a runner (no update) leaves an existing one alone, and the gateway (update)
 * applies a changed value to the consumer that exists.
 */
class JobAckWaitIT {

  @TempDir Path tmp;

  @Test
  void theGatewayAppliesAChangedAckWaitToTheExistingConsumerAndARunnerDoesNot() throws Exception {
    try (NatsServerProcess nats = NatsServerProcess.start(tmp.resolve("nats"));
        Connection connection = Nats.connect(nats.url())) {
      JetStreamManagement jsm = connection.jetStreamManagement();
      Duration configured =
          NatsSettings.fromEnvironment(Map.of("SPB_JOB_ACK_WAIT", "45s")).jobAckWait();
      assertEquals(Duration.ofSeconds(45), configured);

      Streams.ensure(jsm, Streams.EVENT_RETENTION, 1, configured, false);
      assertEquals(configured, ackWait(jsm), "created with the configured ack wait");

      Streams.ensure(jsm, Streams.EVENT_RETENTION, 1, Duration.ofSeconds(3), false);
      assertEquals(configured, ackWait(jsm), "a runner never changes an existing consumer");

      Streams.ensure(jsm, Streams.EVENT_RETENTION, 1, Duration.ofSeconds(3), true);
      assertEquals(Duration.ofSeconds(3), ackWait(jsm), "the gateway applies its value");
    }
  }

  private static Duration ackWait(JetStreamManagement jsm) throws Exception {
    return jsm.getConsumerInfo(
            Subjects.JOBS_STREAM, Subjects.runnersConsumer(Subjects.DEFAULT_IMAGE))
        .getConsumerConfiguration()
        .getAckWait();
  }
}
