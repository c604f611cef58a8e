package ai.spboucher.spbgit.runner.nats;

import ai.spboucher.spbgit.proto.JobEvent;
import ai.spboucher.spbgit.proto.JobStatus;
import ai.spboucher.spbgit.proto.LogChunk;
import ai.spboucher.spbgit.proto.LogStream;
import ai.spboucher.spbgit.proto.StatusChange;
import ai.spboucher.spbgit.proto.Subjects;
import com.google.protobuf.ByteString;
import io.nats.client.JetStream;
import io.nats.client.JetStreamApiException;
import io.nats.client.PublishOptions;
import java.io.IOException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;

/**
 * Publishes one job's events to JetStream in order: status changes on {@code spb.events.<job>.status} and log
 * chunks on {@code spb.events.<job>.log}, each with its own gap-free sequence. Publishing is synchronous and
 * retried through NATS outages (each message carries a {@code Nats-Msg-Id}, so a retry that did land is not
 * stored twice).
 *
 * <p>Threading: status and log publishing may happen on different threads; each kind is synchronised on
 * itself so its sequence stays ordered.
 */
public final class EventPublisher {

  private static final System.Logger LOG = System.getLogger(EventPublisher.class.getName());
  private static final Duration RETRY_FOR = Duration.ofMinutes(10);

  private final JetStream jetStream;
  private final String jobId;
  private final Clock clock;
  private final Object statusLock = new Object();
  private final Object logLock = new Object();
  private long statusSequence;
  private long logSequence;

  public EventPublisher(JetStream jetStream, String jobId, Clock clock) {
    this(jetStream, jobId, clock, 0);
  }

  /**
   * For a job another publisher already reported on (a runner reclaiming its leftovers after a restart): status
   * numbering continues after {@code lastStatusSequence}, so the new event is neither a gap nor, by its message
   * id, a duplicate the stream would drop.
   */
  public EventPublisher(JetStream jetStream, String jobId, Clock clock, long lastStatusSequence) {
    this.jetStream = jetStream;
    this.jobId = jobId;
    this.clock = clock;
    this.statusSequence = lastStatusSequence;
  }

  public void status(JobStatus status, String exitReason, String runnerId, String containerId, String detail) {
    StatusChange change = StatusChange.newBuilder().setStatus(status).setExitReason(nullToEmpty(exitReason))
        .setRunnerId(nullToEmpty(runnerId)).setContainerId(nullToEmpty(containerId))
        .setDetail(nullToEmpty(detail)).build();
    synchronized (statusLock) {
      JobEvent event = base(++statusSequence).setStatus(change).build();
      publish(Subjects.statusEvents(jobId), "status", event);
    }
  }

  public void log(LogStream stream, byte[] data) {
    synchronized (logLock) {
      JobEvent event = base(++logSequence)
          .setLog(LogChunk.newBuilder().setStream(stream).setData(ByteString.copyFrom(data))).build();
      publish(Subjects.logEvents(jobId), "log", event);
    }
  }

  /** The number of log chunks published so far. */
  public long logChunks() {
    synchronized (logLock) {
      return logSequence;
    }
  }

  private JobEvent.Builder base(long sequence) {
    return JobEvent.newBuilder().setJobId(jobId).setSequence(sequence)
        .setTimestampEpochMs(clock.millis());
  }

  private void publish(String subject, String kind, JobEvent event) {
    PublishOptions options = PublishOptions.builder().messageId(jobId + "." + kind + "." + event.getSequence())
        .build();
    Instant giveUp = clock.instant().plus(RETRY_FOR);
    long backoff = 100;
    while (true) {
      try {
        jetStream.publish(subject, event.toByteArray(), options);
        return;
      } catch (IOException | JetStreamApiException e) {
        if (clock.instant().isAfter(giveUp)) {
          LOG.log(System.Logger.Level.ERROR, "giving up publishing " + kind + " event " + event.getSequence()
              + " of job " + jobId + ": " + e.getMessage());
          return;
        }
        try {
          Thread.sleep(backoff);
        } catch (InterruptedException ie) {
          Thread.currentThread().interrupt();
          return;
        }
        backoff = Math.min(backoff * 2, 2000);
      }
    }
  }

  private static String nullToEmpty(String s) {
    return s == null ? "" : s;
  }
}
