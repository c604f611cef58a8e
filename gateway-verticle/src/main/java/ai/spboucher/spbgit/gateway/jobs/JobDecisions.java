package ai.spboucher.spbgit.gateway.jobs;

import ai.spboucher.spbgit.gateway.auth.Principal;
import ai.spboucher.spbgit.gateway.errors.RequestException;
import ai.spboucher.spbgit.gateway.repos.RepoName;
import ai.spboucher.spbgit.hooks.RefNames;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import java.util.List;
import java.util.Optional;

/**
 * The owner's decisions on a job: cancel it while it runs, then approve its proposal (which
 * supersedes the other attempts of its group), reject it, or delete its refs. Each is audited.
 *
 * <p>Threading: call on the gateway's context, as the {@link JobLedger}; the repository is read and
 * written, and the queue asked, on worker threads.
 */
public record JobDecisions(
    Vertx vertx, JobLedger ledger, Proposals proposals, QueueConnection queue, JobEnding ending) {

  /** Cancels a job that has not finished. */
  public Future<Job> cancel(String id) {
    Optional<Job> known = ledger.get(id);
    if (known.isEmpty()) {
      return Future.failedFuture(new RequestException.NotFound("no job " + id));
    }
    Job job = known.get();
    if (job.isFinished()) {
      return Future.failedFuture(
          new RequestException.Conflict("job " + id + " already finished: " + job.exitReason()));
    }
    JobQueue connected;
    try {
      connected = queue.require("the job queue (NATS) is not reachable");
    } catch (RequestException.Unavailable e) {
      return Future.failedFuture(e);
    }
    return vertx
        .executeBlocking(() -> connected.cancel(id, job.queueSequence()), false)
        .compose(
            removedFromQueue ->
                removedFromQueue
                    ? ending.endByGateway(id, "cancelled", "cancelled before a runner took it")
                    // A runner has it: the runner stops the container and reports the end.
                    : Future.succeededFuture(ledger.get(id).get()));
  }

  /**
   * Fast-forwards {@code branch} to the proposal the owner reviewed ({@code sha}); audited once, so
   * approving again with the same branch and commit is a no-op. Partial work is never approved
   * (409).
   */
  public Future<Job> approve(Job job, String branch, String sha, Principal.Owner owner) {
    Optional<RuntimeException> refusal = approvalRefusal(job, branch, sha);
    if (refusal.isPresent()) {
      return Future.failedFuture(refusal.get());
    }
    Decision decided = job.decided();
    return vertx
        .executeBlocking(() -> proposals.approve(RepoName.of(job.repo()), job, branch, sha), false)
        .compose(
            result ->
                decided != null
                    ? Future.succeededFuture(ledger.get(job.id()).get())
                    : ledger.record(
                        new JobApproved(
                            job.id(),
                            job.repo(),
                            branch,
                            sha,
                            owner.tokenId(),
                            result.name().toLowerCase())))
        // Also on a repeated approval: it completes superseding that an earlier one left undone.
        .compose(approved -> supersedeSiblings(approved, owner));
  }

  /** Why {@code job} cannot be approved as {@code sha} on {@code branch}, if it cannot. */
  private static Optional<RuntimeException> approvalRefusal(Job job, String branch, String sha) {
    if (!job.isFinished()) {
      return Optional.of(
          new RequestException.Conflict(
              "job "
                  + job.id()
                  + " is still "
                  + job.status()
                  + "; approve it once it has finished"));
    }
    if (RefNames.problemWith("refs/heads/" + branch).isPresent()) {
      return Optional.of(new RequestException.Invalid("'branch' must be a valid branch name"));
    }
    Decision decided = job.decided();
    if (decided != null && decided.is(Decision.Kind.REJECTED)) {
      return Optional.of(new RequestException.Conflict("job " + job.id() + " was rejected"));
    }
    if (decided != null && decided.is(Decision.Kind.SUPERSEDED)) {
      return Optional.of(supersededRefusal(job));
    }
    if (decided != null && (!branch.equals(decided.branch()) || !sha.equals(decided.sha()))) {
      return Optional.of(
          new RequestException.Conflict(
              "job "
                  + job.id()
                  + " was already approved as "
                  + decided.sha()
                  + " on "
                  + decided.branch()));
    }
    return Optional.empty();
  }

  /**
   * Records {@code job_superseded} for the approved job's undecided siblings, one entry each; their
   * refs stay until the owner deletes them. The group is that of the approved job's chain:
   * approving a revision of an attempt supersedes the other attempts (and the attempt it revised,
   * if still undecided), as approving the attempt itself would. The future carries the approved
   * job.
   */
  private Future<Job> supersedeSiblings(Job approved, Principal.Owner owner) {
    String group = ledger.revisions(approved).get(0).group();
    if (group == null) {
      return Future.succeededFuture(approved);
    }
    Future<Job> chain = Future.succeededFuture(approved);
    for (Job sibling : ledger.group(group)) {
      if (sibling.id().equals(approved.id()) || sibling.decided() != null) {
        continue;
      }
      chain =
          chain.compose(
              v ->
                  ledger.record(
                      new JobSuperseded(
                          sibling.id(), sibling.repo(), group, approved.id(), owner.tokenId())));
    }
    return chain.map(v -> ledger.get(approved.id()).orElse(approved));
  }

  private static RequestException.Conflict supersededRefusal(Job job) {
    return new RequestException.Conflict(
        "job "
            + job.id()
            + " was superseded: job "
            + job.decided().supersededBy()
            + " of its group was approved");
  }

  public Future<Job> reject(Job job, Principal.Owner owner) {
    Decision decided = job.decided();
    if (decided != null && decided.is(Decision.Kind.SUPERSEDED)) {
      return Future.failedFuture(supersededRefusal(job));
    }
    if (decided != null) {
      return decided.is(Decision.Kind.REJECTED)
          ? Future.succeededFuture(job)
          : Future.failedFuture(
              new RequestException.Conflict("job " + job.id() + " was already approved"));
    }
    return ledger.record(new JobRejected(job.id(), job.repo(), owner.tokenId()));
  }

  /** Deletes {@code refs/agents/<job>/*} and audits which refs went. */
  public Future<List<String>> deleteRefs(Job job, Principal.Owner owner) {
    return vertx
        .executeBlocking(() -> proposals.deleteRefs(RepoName.of(job.repo()), job), false)
        .compose(
            deleted ->
                deleted.isEmpty()
                    ? Future.succeededFuture(deleted)
                    : ledger
                        .record(
                            new RefsDeleted(
                                job.id(), job.repo(), new JsonArray(deleted), owner.tokenId()))
                        .map(j -> deleted));
  }
}
