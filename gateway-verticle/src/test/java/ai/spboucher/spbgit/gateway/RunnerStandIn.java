package ai.spboucher.spbgit.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;

import ai.spboucher.spbgit.common.EcKeys;
import ai.spboucher.spbgit.common.TokenSeal;
import ai.spboucher.spbgit.proto.JobEvent;
import ai.spboucher.spbgit.proto.JobRequest;
import ai.spboucher.spbgit.proto.JobStatus;
import ai.spboucher.spbgit.proto.SealedJobToken;
import ai.spboucher.spbgit.proto.StatusChange;
import ai.spboucher.spbgit.proto.Subjects;
import io.nats.client.Connection;
import io.nats.client.JetStreamSubscription;
import io.nats.client.Message;
import io.nats.client.PublishOptions;
import io.nats.client.PullSubscribeOptions;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.PrivateKey;
import java.time.Duration;
import java.util.List;

/**
 * What a test publishes in a runner's place, exactly as a runner does (EventPublisher): a job's
 * status changes numbered per job and deduplicated by their message id. Lets the gateway's and the
 * page's tests drive a job's life without starting a runner. Its runner key is registered with
 * every {@link TestGateway}, so it reads a job's token as a runner does: the copy sealed to it.
 */
public final class RunnerStandIn {

  /** In the gateway's data directory, beside (not in) the runner keys it reads. */
  static final String KEY_FILE = "stand-in-runner-key.pem";

  private RunnerStandIn() {}

  /**
   * Creates the stand-in's key in {@code dataDir} if missing, and authorizes its public half in the
   * gateway's default runner keys' directory. Blocking.
   */
  static void registerKey(Path dataDir) throws Exception {
    Path key = dataDir.resolve(KEY_FILE);
    Path runners = Files.createDirectories(dataDir.resolve("keys").resolve("runners"));
    if (!Files.exists(key)) {
      EcKeys.create(key, runners.resolve("stand-in.pub.pem"));
    }
  }

  /** The job's token, opened from the copy the gateway sealed to the stand-in's key. */
  public static String jobToken(TestGateway gateway, JobRequest request) throws Exception {
    PrivateKey key = EcKeys.readPrivate(gateway.dataDir.resolve(KEY_FILE));
    String kid =
        EcKeys.keyId(EcKeys.readPublic(gateway.dataDir.resolve("keys/runners/stand-in.pub.pem")));
    for (SealedJobToken copy : request.getSealedJobTokensList()) {
      if (copy.getRecipientKid().equals(kid)) {
        return TokenSeal.open(
            request.getJobId(),
            new TokenSeal.Sealed(
                kid,
                copy.getEphemeralKey().toByteArray(),
                copy.getNonce().toByteArray(),
                copy.getCiphertext().toByteArray()),
            kid,
            key);
      }
    }
    throw new AssertionError(
        "job " + request.getJobId() + "'s token is not sealed to the stand-in");
  }

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
   * Reports job {@code id} started on runner r1 in container {@code containerId} (empty: none
   * named), as its status event 1, as a runner does.
   */
  public static void publishStarted(Connection nats, String id, String containerId)
      throws Exception {
    publishStatus(
        nats,
        id,
        1,
        StatusChange.newBuilder()
            .setStatus(JobStatus.STARTED)
            .setRunnerId("r1")
            .setContainerId(containerId)
            .build());
  }

  /**
   * Reports job {@code id} finished ok on runner r1 in container {@code containerId} (empty: none
   * named), as its status event 2, as a runner does.
   */
  public static void publishFinishedOk(Connection nats, String id, String containerId)
      throws Exception {
    publishStatus(
        nats,
        id,
        2,
        StatusChange.newBuilder()
            .setStatus(JobStatus.FINISHED)
            .setExitReason("ok")
            .setRunnerId("r1")
            .setContainerId(containerId)
            .build());
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
