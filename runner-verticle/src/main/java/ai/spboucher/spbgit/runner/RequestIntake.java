package ai.spboucher.spbgit.runner;

import ai.spboucher.spbgit.proto.CancelJob;
import ai.spboucher.spbgit.proto.JobEvent;
import ai.spboucher.spbgit.proto.JobRequest;
import ai.spboucher.spbgit.proto.Signatures;
import ai.spboucher.spbgit.proto.Subjects;
import ai.spboucher.spbgit.runner.nats.NatsLink;
import ai.spboucher.spbgit.runner.nats.RefusalReports;
import ai.spboucher.spbgit.runner.trust.JobRequestCheck;
import ai.spboucher.spbgit.runner.trust.RequestRefused;
import com.google.protobuf.InvalidProtocolBufferException;
import io.nats.client.JetStreamApiException;
import io.nats.client.Message;
import io.nats.client.api.MessageInfo;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.time.Instant;
import java.util.function.Predicate;

/**
 * What the runner does with a job request or cancel before anything runs: acknowledges a request
 * (so it is offered to no one again), has {@link JobRequestCheck} make sure the gateway signed it,
 * it is no replay and it is sealed to this runner, checks that no runner reported its job, and
 * opens its job token; a request that fails is refused: logged and reported ({@link
 * RefusalReports}), never run. A cancel must be signed too; others are logged and ignored.
 *
 * <p>Threading: {@link #take} runs on the dispatcher's fetch thread, {@link #cancel} on a NATS
 * dispatcher thread; both block (NATS round trips), and the check they share is thread-safe.
 */
final class RequestIntake {

  /**
   * The dispatcher's logger: what the runner takes and refuses is logged under one name, as before.
   */
  private static final System.Logger LOG = System.getLogger(JobDispatcher.class.getName());

  private final JobRequestCheck check;
  private final RefusalReports refusals;
  private final NatsLink nats;

  /** Whether a job runs on this runner now. */
  private final Predicate<String> runsHere;

  RequestIntake(
      JobRequestCheck check, RefusalReports refusals, NatsLink nats, Predicate<String> runsHere) {
    this.check = check;
    this.refusals = refusals;
    this.nats = nats;
    this.runsHere = runsHere;
  }

  /**
   * The request of {@code message}, acknowledged and admitted, its job recorded as run here; null
   * when it could not be acknowledged (it will be offered again) or was refused. Blocking.
   */
  Admitted take(Message message) {
    Admitted admitted = acknowledged(message) ? admitted(message) : null;
    if (admitted != null) {
      check.runs(admitted.request().getJobId());
    }
    return admitted;
  }

  /** The cancel of {@code message} if the gateway signed it; null (logged) otherwise. */
  CancelJob cancel(Message message) {
    try {
      return check.signedCancel(message.getData(), signatureOf(message));
    } catch (RequestRefused e) {
      LOG.log(
          System.Logger.Level.WARNING,
          "ignoring a cancel on "
              + RefusalReports.shown(message.getSubject())
              + ": "
              + e.getMessage());
      return null;
    }
  }

  /** The last status event published for the job, or null. Blocking. */
  JobEvent lastStatus(String jobId) {
    try {
      MessageInfo info =
          nats.connection()
              .jetStreamManagement()
              .getLastMessage(Subjects.EVENTS_STREAM, Subjects.statusEvents(jobId));
      return JobEvent.parseFrom(info.getData());
    } catch (JetStreamApiException e) {
      return null; // No status event yet.
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Whether the request is acknowledged: taken by this runner, never to be offered again. */
  private static boolean acknowledged(Message message) {
    try {
      message.ackSync(Duration.ofSeconds(5));
      return true;
    } catch (Exception e) {
      // Not acknowledged: the queue will offer it again, to this runner or another.
      LOG.log(
          System.Logger.Level.WARNING,
          "cannot acknowledge a job (it will be redelivered): " + e.getMessage());
      return false;
    }
  }

  /** A request that passed every check, with its job token opened. */
  record Admitted(JobRequest request, String jobToken) {}

  /**
   * The request once it passed {@link JobRequestCheck} and no runner reported its job; null when it
   * is refused (then logged and reported). Blocking: asks NATS for the job's last status.
   */
  private Admitted admitted(Message message) {
    JobRequest request = null;
    try {
      request = check.signedRequest(message.getData(), signatureOf(message));
      check.requireNew(request);
      String taken = takenAlready(request.getJobId());
      if (taken != null) {
        LOG.log(
            System.Logger.Level.WARNING,
            "job "
                + request.getJobId()
                + " was delivered again, but "
                + taken
                + ": not running it again");
        throw new RequestRefused("replay: " + taken);
      }
      return new Admitted(request, check.jobToken(request));
    } catch (RequestRefused e) {
      refuse(message, request, e.getMessage());
      return null;
    }
  }

  /**
   * Logs and reports a refused request; {@code request} is null when it could not be trusted even
   * for its job id (unsigned or forged), which is then read from the bytes for the report only.
   */
  private void refuse(Message message, JobRequest request, String reason) {
    String jobId = request != null ? request.getJobId() : unverifiedJobId(message.getData());
    long sequence = streamSequence(message);
    LOG.log(
        System.Logger.Level.WARNING,
        "refused a job request for job "
            + RefusalReports.shown(jobId)
            + " (stream sequence "
            + sequence
            + "): "
            + reason);
    refusals.report(jobId, reason, sequence);
  }

  /** What a request that failed its checks says its job is: for the report, never trusted. */
  private static String unverifiedJobId(byte[] data) {
    try {
      return JobRequest.parseFrom(data).getJobId();
    } catch (InvalidProtocolBufferException e) {
      return "";
    }
  }

  private static String signatureOf(Message message) {
    return message.hasHeaders() ? message.getHeaders().getFirst(Signatures.HEADER) : null;
  }

  private static long streamSequence(Message message) {
    try {
      return message.metaData().streamSequence();
    } catch (RuntimeException e) {
      return 0;
    }
  }

  /**
   * When JetStream stored the request, by the NATS server's clock; null if the message does not
   * say.
   */
  static Instant storedAt(Message message) {
    try {
      return message.metaData().timestamp().toInstant();
    } catch (RuntimeException e) {
      return null;
    }
  }

  /**
   * Why a request this runner has just acknowledged must not run: its job runs here already, or a
   * runner has reported it. The queue offers a request again when the runner it went to has not
   * acknowledged it within the ack wait; if that runner was only slow (a long pause, a stalled
   * link), both acknowledgements succeed and both runners hold the request. Null when the job is
   * new to NATS, or when NATS cannot tell: a failed lookup is no reason to drop a job. Blocking.
   */
  private String takenAlready(String jobId) {
    if (runsHere.test(jobId)) {
      return "it is running on this runner";
    }
    try {
      JobEvent last = lastStatus(jobId);
      return last == null
          ? null
          : "runner '"
              + last.getStatus().getRunnerId()
              + "' reported it "
              + last.getStatus().getStatus();
    } catch (UncheckedIOException e) {
      LOG.log(
          System.Logger.Level.WARNING,
          "cannot tell whether job " + jobId + " runs elsewhere (running it): " + e.getMessage());
      return null;
    }
  }
}
