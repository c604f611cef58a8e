package ai.spboucher.spbgit.gateway.jobs;

import ai.spboucher.spbgit.proto.JobEvent;
import ai.spboucher.spbgit.proto.JobStatus;
import ai.spboucher.spbgit.proto.StatusChange;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.function.Predicate;

/**
 * What runners, pushes and the clock tell the gateway about its jobs, applied to the ledger: a
 * runner's start, end or refusal of a request ({@link #onEvent}), the refs a job pushed ({@link
 * #recordRefsWritten}), jobs no runner ended by their deadline ({@link #reapOverdueJobs}) and jobs
 * a previous run of the gateway left unqueued ({@link #endInterruptedCreations}).
 *
 * <p>Threading: call on the gateway's context, as the {@link JobLedger}, except {@link
 * #recordRefsWritten}, which may be called from any thread. {@link #consume} has the queue deliver
 * status events on that context.
 */
public final class RunnerEvents {

  private static final System.Logger LOG = System.getLogger(RunnerEvents.class.getName());

  /** Slack after the deadline before an unfinished job is declared lost. */
  static final Duration LOST_AFTER = Duration.ofMinutes(3);

  private final Context context;
  private final JobLedger ledger;
  private final JobEnding ending;
  private final RefusedRequests refusals;
  private final Clock clock;

  RunnerEvents(Context context, JobLedger ledger, JobEnding ending, Clock clock) {
    this.context = context;
    this.ledger = ledger;
    this.ending = ending;
    this.clock = clock;
    this.refusals = new RefusedRequests(ledger::get, ledger::record);
  }

  /** Has {@code queue} hand this class the runners' status events, on the gateway's context. */
  public void consume(JobQueue queue) {
    queue.consumeStatus(context, this::onEvent);
  }

  /**
   * One status event or refusal from a runner; the future fails when the change could not be
   * audited (the queue then delivers it again).
   */
  public Future<?> onEvent(JobEvent event) {
    if (event.hasRefusal()) {
      return refusals.onRefusal(event);
    }
    Optional<Job> known = ledger.get(event.getJobId());
    if (!event.hasStatus() || known.isEmpty()) {
      return Future.succeededFuture();
    }
    StatusChange change = event.getStatus();
    if (known.get().isFinished()) {
      return lateEvent(known.get(), change);
    }
    if (change.getStatus() == JobStatus.STARTED && known.get().state() == JobState.STARTED) {
      return Future.succeededFuture(); // A redelivered start.
    }
    if (change.getStatus() == JobStatus.STARTED) {
      return ledger.record(RunnerReports.started(event.getJobId(), change));
    }
    if (change.getStatus() == JobStatus.FINISHED) {
      return ending.finish(RunnerReports.finished(event.getJobId(), change));
    }
    return Future.succeededFuture();
  }

  /**
   * The first end is final (the gateway may have decided it itself, say runner_lost at the
   * deadline): a later event is logged and otherwise ignored.
   */
  private Future<Job> lateEvent(Job job, StatusChange change) {
    LOG.log(
        System.Logger.Level.INFO,
        "job "
            + job.id()
            + " already finished ("
            + job.exitReason()
            + "): ignoring a late "
            + change.getStatus()
            + describe(change)
            + " from runner '"
            + change.getRunnerId()
            + "'");
    // It may also be the redelivery of an end whose token revocation failed: make sure the token
    // is revoked.
    return ending.revokeToken(job);
  }

  private static String describe(StatusChange change) {
    return change.getStatus() == JobStatus.FINISHED ? " (" + change.getExitReason() + ")" : "";
  }

  /**
   * Records refs a job token pushed (from the receive-pack post-receive step): one entry per push,
   * bounded because the push gate admits at most {@code PushGate.MAX_REFS_PER_JOB} refs of bounded
   * length per push. Any thread.
   */
  public void recordRefsWritten(String jobId, String repo, String tokenId, JsonArray refs) {
    context.runOnContext(
        v ->
            ledger
                .record(new RefsWritten(jobId, repo, tokenId, refs))
                .onFailure(
                    e ->
                        LOG.log(
                            System.Logger.Level.ERROR, "cannot audit refs of job " + jobId, e)));
  }

  /**
   * Ends the jobs a previous run of the gateway left {@code queued}: it stopped between recording a
   * job and recording that the queue stored its request, so the job was never confirmed to the
   * owner (no 201). Whether the request reached the queue is unknown, and the job token is not kept
   * anywhere to send it again: such a job ends {@code runner_error}, as when publishing times out,
   * and its token is revoked, so a runner that still takes the request cannot push. Call once at
   * start-up, before status events are consumed.
   */
  public Future<Void> endInterruptedCreations() {
    return endUnfinished(
        job -> job.state() == JobState.QUEUED,
        "runner_error",
        "the gateway stopped before the job was queued");
  }

  /**
   * Declares jobs lost that no runner finished by their deadline; the future completes once they
   * are ended.
   */
  public Future<Void> reapOverdueJobs() {
    Instant now = clock.instant();
    return endUnfinished(
        job ->
            job.deadline() != null && Instant.parse(job.deadline()).plus(LOST_AFTER).isBefore(now),
        "runner_lost",
        "no runner reported an end by the deadline");
  }

  /** Ends the unfinished jobs {@code which} selects as the gateway's decision. */
  private Future<Void> endUnfinished(Predicate<Job> which, String reason, String detail) {
    List<Future<Job>> ended =
        ledger.unfinished().stream()
            .filter(which)
            .map(job -> ending.endByGateway(job.id(), reason, detail))
            .toList();
    return Future.all(ended).mapEmpty();
  }
}
