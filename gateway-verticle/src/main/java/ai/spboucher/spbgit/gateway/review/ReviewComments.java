package ai.spboucher.spbgit.gateway.review;

import ai.spboucher.spbgit.gateway.auth.Principal;
import ai.spboucher.spbgit.gateway.errors.RequestException;
import ai.spboucher.spbgit.gateway.jobs.Job;
import ai.spboucher.spbgit.gateway.jobs.JobLedger;
import ai.spboucher.spbgit.gateway.jobs.Proposals;
import ai.spboucher.spbgit.gateway.jobs.ReviewComment;
import ai.spboucher.spbgit.gateway.jobs.WorkRef;
import ai.spboucher.spbgit.gateway.jobs.WorkShas;
import ai.spboucher.spbgit.gateway.repos.RepoName;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The owner's review comments on a job's work: each is checked against the diff the owner sees (the
 * file and line must be in it), audited as {@code review_comment} with the commit it was written
 * on, and listed with whether the work has moved on since ({@code outdated}).
 *
 * <p>Threading: call on the gateway's context (the {@link JobLedger}'s); the refs are read and the
 * diff computed on worker threads.
 */
public final class ReviewComments {

  /** Enough for a thorough review line by line; the audit log and the page stay small. */
  public static final int MAX_PER_JOB = 200;

  private final Vertx vertx;
  private final JobLedger jobs;
  private final Proposals proposals;
  private final ProposalDiffs diffs;

  /** Comments being checked or written, per job: counted against the limit too. On the context. */
  private final Map<String, Integer> inFlight = new HashMap<>();

  public ReviewComments(Vertx vertx, JobLedger jobs, Proposals proposals, ProposalDiffs diffs) {
    this.vertx = vertx;
    this.jobs = jobs;
    this.proposals = proposals;
    this.diffs = diffs;
  }

  /**
   * Adds a comment on the job's proposal, or on its partial work when it has no proposal; the
   * future carries the comment as {@link #list} shows it. Fails with {@link
   * RequestException.Invalid} (a place the diff does not have), {@link RequestException.TooLarge},
   * or {@link RequestException.Conflict} (no work to comment on, {@code commit} no longer the
   * reviewed one, {@link #MAX_PER_JOB} reached).
   */
  public Future<JsonObject> add(Job job, NewComment comment, Principal.Owner owner) {
    try {
      comment.check();
    } catch (RequestException.Invalid | RequestException.TooLarge e) {
      return Future.failedFuture(e);
    }
    int written = jobs.comments(job.id()).size() + inFlight.getOrDefault(job.id(), 0);
    if (written >= MAX_PER_JOB) {
      return Future.failedFuture(
          new RequestException.Conflict(
              "job " + job.id() + " has " + MAX_PER_JOB + " review comments, as many as allowed"));
    }
    inFlight.merge(job.id(), 1, Integer::sum);
    return reviewed(job)
        .compose(
            which ->
                // Never cancelled: the comment is checked against the whole computation.
                diffs.diff(job, which, Promise.<Void>promise().future()).map(JsonObject::new))
        .compose(diff -> jobs.recordComment(entry(job, comment, diff, owner)))
        .andThen(done -> inFlight.computeIfPresent(job.id(), (id, n) -> n == 1 ? null : n - 1));
  }

  /**
   * The job's comments, oldest first, each marked {@code outdated} when the work it was written on
   * is no longer the job's current proposal (or partial work).
   */
  public Future<List<JsonObject>> list(Job job) {
    List<JsonObject> comments = jobs.comments(job.id());
    if (comments.isEmpty()) {
      return Future.succeededFuture(comments);
    }
    return vertx
        .executeBlocking(() -> shasOf(job), false)
        .map(
            shas -> {
              String current = shas.proposal() != null ? shas.proposal() : shas.partial();
              return comments.stream()
                  .map(c -> c.copy().put("outdated", !c.getString("commit").equals(current)))
                  .toList();
            });
  }

  /** Which work the page reviews: the proposal, or else the partial work. */
  private Future<WorkRef> reviewed(Job job) {
    return vertx
        .executeBlocking(() -> shasOf(job), false)
        .compose(
            shas ->
                shas.proposal() != null
                    ? Future.succeededFuture(WorkRef.PROPOSAL)
                    : shas.partial() != null
                        ? Future.succeededFuture(WorkRef.PARTIAL)
                        : Future.failedFuture(
                            new RequestException.Conflict(
                                "job "
                                    + job.id()
                                    + " has no proposal or partial work to comment on yet")));
  }

  private WorkShas shasOf(Job job) throws IOException {
    return proposals
        .workShas(RepoName.of(job.repo()), List.of(job))
        .getOrDefault(job.id(), WorkShas.NONE);
  }

  /** The audit entry of {@code comment}, once its place is found in {@code diff}. */
  private static ReviewComment entry(
      Job job, NewComment comment, JsonObject diff, Principal.Owner owner) {
    String head = diff.getString("head");
    String kind = diff.getString("kind");
    if (comment.commit() != null && !comment.commit().equals(head)) {
      throw new RequestException.Conflict(
          "the "
              + kind
              + " of job "
              + job.id()
              + " is now "
              + head
              + ", not "
              + comment.commit()
              + ": reload it and comment on what it is now");
    }
    if (!comment.isSummary()) {
      requireLine(diff, comment);
    }
    return new ReviewComment(
        job.id(),
        job.repo(),
        head,
        kind,
        comment.path(),
        comment.isSummary() ? null : comment.sideOrDefault(),
        comment.line(),
        comment.body(),
        owner.tokenId());
  }

  /**
   * The comment's line must be one the diff shows: a line of the file's hunks numbered {@code line}
   * on its side (context lines have both numbers, added ones only new, deleted ones only old).
   */
  private static void requireLine(JsonObject diff, NewComment comment) {
    String side = comment.sideOrDefault();
    JsonObject file = null;
    for (Object f : diff.getJsonArray("files", new JsonArray())) {
      if (f instanceof JsonObject o && comment.path().equals(o.getString("path"))) {
        file = o;
      }
    }
    if (file == null) {
      throw new RequestException.Invalid(
          "the diff of " + diff.getString("head") + " has no file '" + comment.path() + "'");
    }
    for (Object h : file.getJsonArray("hunks", new JsonArray())) {
      for (Object l : ((JsonObject) h).getJsonArray("lines", new JsonArray())) {
        if (comment.line().equals(((JsonObject) l).getInteger(side))) {
          return;
        }
      }
    }
    throw new RequestException.Invalid(
        "the diff of '"
            + comment.path()
            + "' shows no line "
            + comment.line()
            + " on its "
            + side
            + " side");
  }
}
