package ai.spboucher.spbgit.gateway;

import ai.spboucher.spbgit.gateway.auth.Authenticator;
import ai.spboucher.spbgit.gateway.auth.JobTokens;
import ai.spboucher.spbgit.gateway.auth.Sessions;
import ai.spboucher.spbgit.gateway.jobs.JobLifecycle;
import ai.spboucher.spbgit.gateway.jobs.JobMetrics;
import ai.spboucher.spbgit.gateway.jobs.JobViews;
import ai.spboucher.spbgit.gateway.jobs.Proposals;
import ai.spboucher.spbgit.gateway.repos.RepoName;
import ai.spboucher.spbgit.gateway.review.DiffBudget;
import ai.spboucher.spbgit.gateway.review.ProposalDiffs;
import ai.spboucher.spbgit.gateway.review.ReviewComments;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.vertx.core.Vertx;
import java.time.Clock;
import java.util.function.Function;

/**
 * The gateway's services, built in one place from the opened data directory and the settings: the
 * routes and the verticle are handed these, and build none of their own. One {@link Proposals}
 * reads and writes job refs for all of them.
 *
 * @param jobTokens the job tokens of the data directory's keys and revocation list
 * @param jobs a job's life: creation, revisions, decisions, runner events and their ledger
 * @param views the jobs as the API shows them, with their work read from the repositories
 * @param diffs the diffs of jobs' work, bounded in time and shared by concurrent readers
 * @param comments the owner's review comments on jobs' work
 */
record GatewayServices(
    JobTokens jobTokens,
    Authenticator authenticator,
    Sessions sessions,
    JobLifecycle jobs,
    JobMetrics metrics,
    JobViews views,
    ProposalDiffs diffs,
    ReviewComments comments) {

  /**
   * Builds every service; call on the gateway verticle's context, where the job ledger replays the
   * audit log and lives.
   */
  static GatewayServices build(
      Vertx vertx,
      DataDir dir,
      GatewayConfig config,
      Clock clock,
      PrometheusMeterRegistry registry,
      Function<RepoName, String> cloneUrl) {
    JobTokens jobTokens = dir.jobTokens(clock);
    Proposals proposals = new Proposals(dir.repos());
    JobLifecycle jobs =
        JobLifecycle.open(
            vertx,
            dir.audit(),
            jobTokens,
            dir.repos(),
            proposals,
            cloneUrl,
            config.jobWallLimit(),
            config.models(),
            clock);
    JobMetrics metrics = new JobMetrics(registry, () -> jobs.ledger().list(null));
    jobs.ledger().measure(metrics);
    ProposalDiffs diffs =
        new ProposalDiffs(
            vertx, dir.repos(), DiffBudget.withTime(config.diffTimeBudget()), registry);
    return new GatewayServices(
        jobTokens,
        new Authenticator(dir.pats(), jobTokens),
        new Sessions(clock),
        jobs,
        metrics,
        new JobViews(vertx, proposals),
        diffs,
        new ReviewComments(vertx, jobs.ledger(), proposals, diffs));
  }
}
