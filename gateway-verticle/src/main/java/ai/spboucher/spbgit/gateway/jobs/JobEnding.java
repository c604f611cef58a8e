package ai.spboucher.spbgit.gateway.jobs;

import ai.spboucher.spbgit.gateway.auth.JobTokens;
import io.vertx.core.Future;
import java.time.Instant;

/**
 * Ends jobs, whoever decided the end (a runner, a cancel, the deadline, a failed publish): audits
 * the end and revokes the job's token, so no finished job has a live token.
 *
 * <p>Threading: on the gateway's context, as the {@link JobLedger}; the token is revoked on the
 * audit thread, after the end is stored.
 */
record JobEnding(JobLedger ledger, JobTokens tokens) {

  /**
   * Ends a job: audits the end (with the model spend the runner metered, for llm jobs) and revokes
   * its token so it cannot push any more; only then is the job shown finished.
   */
  Future<Job> finish(JobFinished end) {
    return ledger.record(
        end,
        () ->
            ledger
                .get(end.job())
                .map(this::revokeToken)
                .orElse(Future.succeededFuture())
                .mapEmpty());
  }

  /** Ends a job as the gateway decided: see {@link #finish(JobFinished)}. */
  Future<Job> endByGateway(String id, String reason, String detail) {
    return finish(RunnerReports.endedByGateway(id, reason, detail));
  }

  /** Revokes the job's token unless it already is; the future carries the job. */
  Future<Job> revokeToken(Job job) {
    if (tokens.isRevoked(job.tokenId())) {
      return Future.succeededFuture(job);
    }
    return ledger.runAfterAppends(
        () -> {
          tokens.revoke(job.tokenId(), Instant.parse(job.tokenExpires()));
          return job;
        });
  }
}
