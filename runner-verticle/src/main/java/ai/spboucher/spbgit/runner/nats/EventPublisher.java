package ai.spboucher.spbgit.runner.nats;

import ai.spboucher.spbgit.proto.CacheOutcome;
import ai.spboucher.spbgit.proto.EgressAttempt;
import ai.spboucher.spbgit.proto.JobEvent;
import ai.spboucher.spbgit.proto.JobStatus;
import ai.spboucher.spbgit.proto.LogChunk;
import ai.spboucher.spbgit.proto.LogStream;
import ai.spboucher.spbgit.proto.ModelCall;
import ai.spboucher.spbgit.proto.StatusChange;
import ai.spboucher.spbgit.proto.Subjects;
import com.google.protobuf.ByteString;
import io.nats.client.JetStream;
import io.nats.client.JetStreamApiException;
import io.nats.client.JetStreamManagement;
import io.nats.client.PublishOptions;
import io.nats.client.api.PublishAck;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;

/**
 * Publishes one job's events to JetStream in order: status changes on {@code
 * spb.events.<job>.status}, log chunks on {@code spb.events.<job>.log}, model calls on {@code
 * spb.events.<job>.model} and egress attempts on {@code spb.events.<job>.egress}, each with its own
 * gap-free sequence. Publishing is synchronous and retried through NATS outages (each message
 * carries a {@code Nats-Msg-Id}, so a retry that did land is not stored twice).
 *
 * <p>Threading: the kinds may be published on different threads; each kind is synchronised on
 * itself so its sequence stays ordered. Every method blocks until JetStream acknowledged (or the
 * retries gave up): callers that must not block use {@link BackgroundEvents}.
 */
public final class EventPublisher {

  private static final System.Logger LOG = System.getLogger(EventPublisher.class.getName());
  private static final Duration RETRY_FOR = Duration.ofMinutes(10);

  private final JetStream jetStream;

  /** Reads stored events back; null when this publisher was not given one. */
  private final JetStreamManagement management;

  private final String jobId;
  private final Clock clock;
  private final Object statusLock = new Object();
  private final Object logLock = new Object();
  private final Object modelLock = new Object();
  private final Object egressLock = new Object();
  private long statusSequence;
  private long logSequence;
  private long modelSequence;
  private long egressSequence;

  public EventPublisher(JetStream jetStream, String jobId, Clock clock) {
    this(jetStream, null, jobId, clock, 0);
  }

  /**
   * A publisher that can also tell when the stream stored an event ({@link #runnerLineStoredAt}).
   */
  public EventPublisher(
      JetStream jetStream, JetStreamManagement management, String jobId, Clock clock) {
    this(jetStream, management, jobId, clock, 0);
  }

  /**
   * For a job another publisher already reported on (a runner reclaiming its leftovers after a
   * restart): status numbering continues after {@code lastStatusSequence}, so the new event is
   * neither a gap nor, by its message id, a duplicate the stream would drop.
   */
  public EventPublisher(JetStream jetStream, String jobId, Clock clock, long lastStatusSequence) {
    this(jetStream, null, jobId, clock, lastStatusSequence);
  }

  private EventPublisher(
      JetStream jetStream,
      JetStreamManagement management,
      String jobId,
      Clock clock,
      long lastStatusSequence) {
    this.jetStream = jetStream;
    this.management = management;
    this.jobId = jobId;
    this.clock = clock;
    this.statusSequence = lastStatusSequence;
  }

  /** An llm job's model spend, as the runner metered it. */
  public record Spend(String provider, String model, long inputTokens, long outputTokens) {}

  public void status(
      JobStatus status, String exitReason, String runnerId, String containerId, String detail) {
    status(status, exitReason, runnerId, containerId, detail, null, StatusChange.newBuilder());
  }

  /**
   * STARTED, with the image the job runs in by digest (its id on this runner's engine), whether its
   * setup ran or its cache was restored, for a job running a coding agent its name and the version
   * installed in the image (empty for an exec job), and the setup facts {@code facts} already holds
   * (on a cache hit: the key restored and its producer).
   */
  public void started(
      String runnerId,
      String containerId,
      String imageDigest,
      CacheOutcome cache,
      String agent,
      String agentVersion,
      StatusChange.Builder facts) {
    publishStatus(
        facts
            .setStatus(JobStatus.STARTED)
            .setRunnerId(nullToEmpty(runnerId))
            .setContainerId(nullToEmpty(containerId))
            .setImageDigest(nullToEmpty(imageDigest))
            .setCache(cache)
            .setAgent(nullToEmpty(agent))
            .setAgentVersion(nullToEmpty(agentVersion))
            .build());
  }

  /**
   * A status change with the setup facts {@code facts} already holds; {@code spend} (null for exec
   * jobs) goes into the FINISHED event of an llm job.
   */
  public void status(
      JobStatus status,
      String exitReason,
      String runnerId,
      String containerId,
      String detail,
      Spend spend,
      StatusChange.Builder facts) {
    StatusChange.Builder builder =
        facts
            .setStatus(status)
            .setExitReason(nullToEmpty(exitReason))
            .setRunnerId(nullToEmpty(runnerId))
            .setContainerId(nullToEmpty(containerId))
            .setDetail(nullToEmpty(detail));
    if (spend != null) {
      builder
          .setProvider(spend.provider())
          .setModel(spend.model())
          .setInputTokens(spend.inputTokens())
          .setOutputTokens(spend.outputTokens());
    }
    publishStatus(builder.build());
  }

  private void publishStatus(StatusChange change) {
    synchronized (statusLock) {
      JobEvent event = base(++statusSequence).setStatus(change).build();
      publish(Subjects.statusEvents(jobId), "status", event);
    }
  }

  public void log(LogStream stream, byte[] data) {
    synchronized (logLock) {
      JobEvent event =
          base(++logSequence)
              .setLog(LogChunk.newBuilder().setStream(stream).setData(ByteString.copyFrom(data)))
              .build();
      publish(Subjects.logEvents(jobId), "log", event);
    }
  }

  /**
   * Publishes one line of the runner's own ({@code RUNNER}, {@code [spb-runner] } prefixed) and
   * returns when the events stream stored it, by the NATS server's clock, read back from the
   * stream. Null when the publish gave up, the stored message cannot be read, or this publisher has
   * no {@link JetStreamManagement}.
   */
  public Instant runnerLineStoredAt(String line) {
    byte[] data = ("[spb-runner] " + line + "\n").getBytes(StandardCharsets.UTF_8);
    PublishAck ack;
    synchronized (logLock) {
      JobEvent event =
          base(++logSequence)
              .setLog(
                  LogChunk.newBuilder()
                      .setStream(LogStream.RUNNER)
                      .setData(ByteString.copyFrom(data)))
              .build();
      ack = publish(Subjects.logEvents(jobId), "log", event);
    }
    if (ack == null || management == null) {
      return null;
    }
    try {
      return management.getMessage(ack.getStream(), ack.getSeqno()).getTime().toInstant();
    } catch (IOException | JetStreamApiException | RuntimeException e) {
      LOG.log(
          System.Logger.Level.WARNING,
          "cannot read back when the stream stored a log line of job "
              + jobId
              + ": "
              + e.getMessage());
      return null;
    }
  }

  public void modelCall(ModelCall call) {
    synchronized (modelLock) {
      publish(
          Subjects.modelEvents(jobId), "model", base(++modelSequence).setModelCall(call).build());
    }
  }

  public void egress(EgressAttempt attempt) {
    synchronized (egressLock) {
      publish(
          Subjects.egressEvents(jobId),
          "egress",
          base(++egressSequence).setEgress(attempt).build());
    }
  }

  /** The number of log chunks published so far. */
  public long logChunks() {
    synchronized (logLock) {
      return logSequence;
    }
  }

  private JobEvent.Builder base(long sequence) {
    return JobEvent.newBuilder()
        .setJobId(jobId)
        .setSequence(sequence)
        .setTimestampEpochMs(clock.millis());
  }

  /**
   * Publishes with retries; returns the stream's acknowledgement, or null if the retries gave up.
   */
  private PublishAck publish(String subject, String kind, JobEvent event) {
    PublishOptions options =
        PublishOptions.builder().messageId(jobId + "." + kind + "." + event.getSequence()).build();
    Instant giveUp = clock.instant().plus(RETRY_FOR);
    long backoff = 100;
    while (true) {
      try {
        return jetStream.publish(subject, event.toByteArray(), options);
      } catch (IOException | JetStreamApiException e) {
        if (clock.instant().isAfter(giveUp)) {
          LOG.log(
              System.Logger.Level.ERROR,
              "giving up publishing "
                  + kind
                  + " event "
                  + event.getSequence()
                  + " of job "
                  + jobId
                  + ": "
                  + e.getMessage());
          return null;
        }
        try {
          Thread.sleep(backoff);
        } catch (InterruptedException ie) {
          Thread.currentThread().interrupt();
          return null;
        }
        backoff = Math.min(backoff * 2, 2000);
      }
    }
  }

  private static String nullToEmpty(String s) {
    return s == null ? "" : s;
  }
}
