package ai.spboucher.spbgit.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;

import ai.spboucher.spbgit.proto.JobEvent;
import ai.spboucher.spbgit.proto.JobRequest;
import ai.spboucher.spbgit.proto.StatusChange;
import ai.spboucher.spbgit.proto.Subjects;
import io.nats.client.Connection;
import io.nats.client.JetStreamSubscription;
import io.nats.client.Message;
import io.nats.client.PublishOptions;
import io.nats.client.PullSubscribeOptions;
import java.time.Duration;
import java.util.List;

/**
 * What a test publishes in a runner's place, exactly as a runner does (EventPublisher): a job's
 * status changes numbered per job and deduplicated by their message id. Lets the gateway's and the
 * page's tests drive a job's life without starting a runner.
 */
public final class RunnerStandIn {

  private RunnerStandIn() {}

  /** Publishes {@code change} as the job's status event number {@code sequence}. */
  public static void publishStatus(Connection nats, String id, long sequence, StatusChange change)
      throws Exception {
    JobEvent event =
        JobEvent.newBuilder()
            .setJobId(id)
            .setSequence(sequence)
            .setTimestampEpochMs(System.currentTimeMillis())
            .setStatus(change)
            .build();
    nats.jetStream()
        .publish(
            Subjects.statusEvents(id),
            event.toByteArray(),
            PublishOptions.builder().messageId(id + ".status." + sequence).build());
  }

  /**
   * The request of {@code job} as a runner takes it from the queue: the message at the sequence its
   * {@code job_dispatched} entry records.
   */
  public static JobRequest queuedRequest(Connection nats, TestGateway gateway, String job)
      throws Exception {
    long sequence = gateway.auditEntry(job, "job_dispatched").getLong("queue_seq");
    return JobRequest.parseFrom(
        nats.jetStreamManagement().getMessage(Subjects.JOBS_STREAM, sequence).getData());
  }

  /** Takes the next job request from the default image's queue and acks it, as a runner does. */
  public static JobRequest takeRequest(Connection nats) throws Exception {
    JetStreamSubscription queue =
        nats.jetStream()
            .subscribe(
                Subjects.jobRequests(Subjects.DEFAULT_IMAGE),
                PullSubscribeOptions.bind(
                    Subjects.JOBS_STREAM, Subjects.runnersConsumer(Subjects.DEFAULT_IMAGE)));
    List<Message> taken = queue.fetch(1, Duration.ofSeconds(10));
    assertEquals(1, taken.size(), "the job was queued");
    taken.get(0).ack();
    return JobRequest.parseFrom(taken.get(0).getData());
  }
}
