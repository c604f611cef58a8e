package ai.spboucher.spbgit.runner.nats;

import ai.spboucher.spbgit.proto.JobEvent;
import ai.spboucher.spbgit.proto.RequestRefusal;
import ai.spboucher.spbgit.proto.Subjects;
import io.nats.client.JetStream;
import io.nats.client.PublishOptions;
import java.time.Clock;

/**
 * Tells the gateway that this runner refused a job request, on {@code spb.events.<job>.refused}
 * ({@link RequestRefusal}): once, with no retries, since the refusal is logged here either way and
 * the request it names may be anyone's. A request's job id is whatever its sender wrote, so only
 * its first {@link #MAX_JOB_ID} characters are repeated.
 *
 * <p>Threading: {@link #report} blocks for one publish; thread-safe.
 */
public final class RefusalReports {

  private static final System.Logger LOG = System.getLogger(RefusalReports.class.getName());
  static final int MAX_JOB_ID = 128;

  private final JetStream jetStream;
  private final String runnerId;
  private final Clock clock;

  /**
   * Untrusted text (a job id, a subject) as a log line may repeat it: its first {@link #MAX_JOB_ID}
   * characters, control characters replaced.
   */
  public static String shown(String text) {
    String line = text.replaceAll("\\p{Cntrl}", "?");
    return line.length() <= MAX_JOB_ID ? line : line.substring(0, MAX_JOB_ID) + "...";
  }

  public RefusalReports(JetStream jetStream, String runnerId, Clock clock) {
    this.jetStream = jetStream;
    this.runnerId = runnerId;
    this.clock = clock;
  }

  /**
   * Publishes the refusal of the request stored at {@code streamSequence} of the jobs stream; a
   * failure is logged, not thrown.
   */
  public void report(String jobId, String reason, long streamSequence) {
    String job = jobId.length() <= MAX_JOB_ID ? jobId : jobId.substring(0, MAX_JOB_ID);
    JobEvent event =
        JobEvent.newBuilder()
            .setJobId(job)
            .setTimestampEpochMs(clock.millis())
            .setRefusal(
                RequestRefusal.newBuilder()
                    .setReason(reason)
                    .setRunnerId(runnerId)
                    .setStreamSequence(Math.max(0, streamSequence)))
            .build();
    try {
      jetStream.publish(
          Subjects.refusals(job),
          event.toByteArray(),
          PublishOptions.builder().messageId("refused." + runnerId + "." + streamSequence).build());
    } catch (Exception e) {
      LOG.log(
          System.Logger.Level.WARNING,
          "cannot report the refusal of a request for job " + job + ": " + e.getMessage());
    }
  }
}
