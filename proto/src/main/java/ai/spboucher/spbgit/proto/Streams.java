package ai.spboucher.spbgit.proto;

import io.nats.client.JetStreamApiException;
import io.nats.client.JetStreamManagement;
import io.nats.client.api.AckPolicy;
import io.nats.client.api.ConsumerConfiguration;
import io.nats.client.api.DeliverPolicy;
import io.nats.client.api.RetentionPolicy;
import io.nats.client.api.StorageType;
import io.nats.client.api.StreamConfiguration;
import java.io.IOException;
import java.time.Duration;

/**
 * The JetStream streams and durable consumers of the protocol. Both the gateway and the runners
 * call {@link #ensure} on connect, so whichever starts first creates them; it is idempotent.
 * Blocking.
 */
public final class Streams {

  /** How long the stream keeps a request for deduplication by {@code Nats-Msg-Id} (the job id). */
  public static final Duration DUPLICATE_WINDOW = Duration.ofMinutes(10);

  /**
   * How long the events stream keeps a job's log and status changes for replay, unless configured.
   */
  public static final Duration EVENT_RETENTION = Duration.ofDays(30);

  /**
   * Runners retry publishing an event for up to ten minutes; a retry that did land must be
   * recognised.
   */
  public static final Duration EVENT_DUPLICATE_WINDOW = Duration.ofMinutes(15);

  private Streams() {}

  /**
   * Creates the streams and durable consumers that are missing; with {@code update}, also applies
   * {@code eventRetention} and {@code replicas} to existing streams and {@code jobAckWait} (how
   * long a delivered job request waits for its ack before it is delivered again) to the default
   * image's consumer. The gateway owns these settings and updates; runners only create what is
   * missing, so they never undo the operator's configuration.
   */
  public static void ensure(
      JetStreamManagement jsm,
      Duration eventRetention,
      int replicas,
      Duration jobAckWait,
      boolean update)
      throws IOException, JetStreamApiException {
    upsert(
        jsm,
        StreamConfiguration.builder()
            .name(Subjects.JOBS_STREAM)
            .subjects(Subjects.ALL_JOB_REQUESTS)
            .retentionPolicy(RetentionPolicy.WorkQueue)
            .storageType(StorageType.File)
            .duplicateWindow(DUPLICATE_WINDOW)
            .replicas(replicas)
            .build(),
        update);
    upsert(
        jsm,
        StreamConfiguration.builder()
            .name(Subjects.EVENTS_STREAM)
            .subjects(Subjects.ALL_EVENTS)
            .retentionPolicy(RetentionPolicy.Limits)
            .storageType(StorageType.File)
            .maxAge(eventRetention)
            .duplicateWindow(EVENT_DUPLICATE_WINDOW)
            .replicas(replicas)
            .build(),
        update);
    // The default image's consumer exists from the start, whoever connects first; runners add their
    // images'.
    ensureRunnersConsumer(jsm, Subjects.DEFAULT_IMAGE, jobAckWait, update);
    upsertConsumer(
        jsm,
        Subjects.EVENTS_STREAM,
        ConsumerConfiguration.builder()
            .durable(Subjects.GATEWAY_EVENTS_CONSUMER)
            .ackPolicy(AckPolicy.Explicit)
            .ackWait(Duration.ofSeconds(30))
            .deliverPolicy(DeliverPolicy.All)
            .filterSubject(Subjects.ALL_STATUS_EVENTS)
            .build(),
        update);
    upsertConsumer(
        jsm,
        Subjects.EVENTS_STREAM,
        ConsumerConfiguration.builder()
            .durable(Subjects.GATEWAY_REFUSALS_CONSUMER)
            .ackPolicy(AckPolicy.Explicit)
            .ackWait(Duration.ofSeconds(30))
            .deliverPolicy(DeliverPolicy.All)
            .filterSubject(Subjects.ALL_REFUSALS)
            .build(),
        update);
  }

  /**
   * Creates {@code image}'s durable pull consumer ({@link Subjects#runnersConsumer}) with {@code
   * jobAckWait} if missing (with {@code update}, applies it to an existing one): a runner calls it
   * for each image it offers. Requests published before it existed are delivered too (the stream
   * keeps them).
   */
  public static void ensureRunnersConsumer(
      JetStreamManagement jsm, String image, Duration jobAckWait, boolean update)
      throws IOException, JetStreamApiException {
    upsertConsumer(
        jsm,
        Subjects.JOBS_STREAM,
        ConsumerConfiguration.builder()
            .durable(Subjects.runnersConsumer(image))
            .ackPolicy(AckPolicy.Explicit)
            .ackWait(jobAckWait)
            .deliverPolicy(DeliverPolicy.All)
            .filterSubject(Subjects.jobRequests(image))
            .build(),
        update);
  }

  private static void upsertConsumer(
      JetStreamManagement jsm, String stream, ConsumerConfiguration config, boolean update)
      throws IOException, JetStreamApiException {
    if (!update) {
      try {
        jsm.getConsumerInfo(stream, config.getDurable());
        return;
      } catch (JetStreamApiException e) {
        if (e.getErrorCode() != 404) {
          throw e;
        }
      }
    }
    jsm.addOrUpdateConsumer(stream, config);
  }

  private static void upsert(JetStreamManagement jsm, StreamConfiguration config, boolean update)
      throws IOException, JetStreamApiException {
    try {
      jsm.getStreamInfo(config.getName());
      if (update) {
        jsm.updateStream(config);
      }
    } catch (JetStreamApiException e) {
      if (e.getErrorCode() != 404) {
        throw e;
      }
      jsm.addStream(config);
    }
  }
}
