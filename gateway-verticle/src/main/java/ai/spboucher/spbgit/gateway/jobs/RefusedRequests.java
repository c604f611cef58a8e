package ai.spboucher.spbgit.gateway.jobs;

import ai.spboucher.spbgit.proto.JobEvent;
import ai.spboucher.spbgit.proto.RequestRefusal;
import io.vertx.core.Future;
import java.util.Optional;
import java.util.function.Function;

/**
 * What the gateway does with a runner's refusal of a job request (docs/protocol.md, "Refused
 * requests"). For a job it knows it appends a {@code job_refused} entry (job, repo, runner, reason)
 * to the audit log, which changes nothing about the job: the genuine request may still run, and a
 * replay of a finished job's request leaves it finished. The exception is the job's own request
 * refused as already taken: JetStream delivered that stored message to a second runner after the
 * first was slow to acknowledge it (its stream sequence is the job's {@code queue_seq}), which is
 * no attack and only logged. A refusal naming no job the gateway knows is only logged.
 *
 * <p>Not thread-safe: used by {@link RunnerEvents} on its context.
 */
final class RefusedRequests {

  private static final System.Logger LOG = System.getLogger(RefusedRequests.class.getName());

  /** The longest job id or reason a log line repeats: a forged request may name anything. */
  private static final int SHOWN = 200;

  private final Function<String, Optional<Job>> jobs;
  private final Function<AuditEvent, Future<?>> record;

  /**
   * @param jobs the jobs the gateway knows, by id
   * @param record appends an audit entry and applies it
   */
  RefusedRequests(Function<String, Optional<Job>> jobs, Function<AuditEvent, Future<?>> record) {
    this.jobs = jobs;
    this.record = record;
  }

  /** Handles one refusal event; the future fails when the audit entry could not be written. */
  Future<?> onRefusal(JobEvent event) {
    RequestRefusal refusal = event.getRefusal();
    Optional<Job> job = jobs.apply(event.getJobId());
    String said =
        "runner '"
            + shown(refusal.getRunnerId())
            + "' refused a request for job "
            + shown(event.getJobId())
            + ": "
            + shown(refusal.getReason());
    if (job.isEmpty()) {
      LOG.log(System.Logger.Level.WARNING, said + " (no such job; not audited)");
      return Future.succeededFuture();
    }
    if (job.get().queueSequence() > 0 && refusal.getStreamSequence() == job.get().queueSequence()) {
      LOG.log(System.Logger.Level.INFO, said + " (its own request, delivered again)");
      return Future.succeededFuture();
    }
    LOG.log(System.Logger.Level.WARNING, said);
    return record.apply(
        new JobRefused(
            job.get().id(),
            job.get().repo(),
            capped(refusal.getRunnerId(), 64),
            capped(refusal.getReason(), 1000)));
  }

  /** Anyone who may publish runner events may send one: its text is bounded in the audit log. */
  private static String capped(String text, int length) {
    return text.length() <= length ? text : text.substring(0, length);
  }

  private static String shown(String text) {
    String line = text.replaceAll("\\p{Cntrl}", "?");
    return line.length() <= SHOWN ? line : line.substring(0, SHOWN) + "...";
  }
}
