package ai.spboucher.spbgit.gateway.jobs;

import ai.spboucher.spbgit.gateway.audit.AuditLog;
import ai.spboucher.spbgit.gateway.auth.JobTokens;
import ai.spboucher.spbgit.gateway.repos.RepoName;
import ai.spboucher.spbgit.gateway.repos.RepositoryStore;
import io.vertx.core.Vertx;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.function.Function;

/**
 * A job's life on the gateway, one class per reason to change around the ledger they share:
 * creating jobs ({@link JobCreation}), revising them ({@link JobRevisions}), the owner's decisions
 * ({@link JobDecisions}) and what runners report ({@link RunnerEvents}), all recorded in the {@link
 * JobLedger}.
 *
 * <p>Threading: open it on the gateway's context; every part is called there.
 *
 * @param queue the job queue, once {@link #attach attached}
 */
public record JobLifecycle(
    JobLedger ledger,
    JobCreation creation,
    JobRevisions revisions,
    JobDecisions decisions,
    RunnerEvents runnerEvents,
    QueueConnection queue) {

  /**
   * Replays the audit log and wires the parts; creating and cancelling fail as unavailable until
   * {@link #attach}.
   *
   * @param proposals the gateway's one reader and writer of job refs
   * @param cloneUrl where runners clone a repository from
   * @param wallLimit how long a job may run
   * @param models the models llm-mode jobs may use, the default first; empty when no model provider
   *     is configured
   */
  public static JobLifecycle open(
      Vertx vertx,
      AuditLog audit,
      JobTokens tokens,
      RepositoryStore repos,
      Proposals proposals,
      Function<RepoName, String> cloneUrl,
      Duration wallLimit,
      List<String> models,
      Clock clock) {
    JobLedger ledger = new JobLedger(vertx, audit);
    JobEnding ending = new JobEnding(ledger, tokens);
    QueueConnection queue = new QueueConnection();
    JobDecisions decisions = new JobDecisions(vertx, ledger, proposals, queue, ending);
    JobCreation creation =
        new JobCreation(
            vertx,
            ledger,
            new JobPreparation(repos, proposals, tokens, wallLimit, clock),
            queue,
            ending,
            decisions,
            cloneUrl,
            wallLimit,
            models,
            clock);
    return new JobLifecycle(
        ledger,
        creation,
        new JobRevisions(vertx, ledger, proposals, creation),
        decisions,
        new RunnerEvents(vertx.getOrCreateContext(), ledger, ending, clock),
        queue);
  }

  /**
   * Attaches the job queue once connected: jobs can be created and cancelled, and runners' status
   * events arrive at {@link RunnerEvents}. Call on the gateway's context.
   */
  public void attach(JobQueue jobQueue) {
    queue.attach(jobQueue);
    runnerEvents.consume(jobQueue);
  }
}
