package ai.spboucher.spbgit.gateway.jobs;

import ai.spboucher.spbgit.gateway.audit.AuditLog;
import ai.spboucher.spbgit.gateway.audit.AuditWriter;
import ai.spboucher.spbgit.gateway.errors.RequestException;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.function.Predicate;
import java.util.function.Supplier;
import java.util.stream.Collectors;

/**
 * What every job verb shares: the audit log and the {@link JobBook} derived from it. A change is
 * appended to the log first and only then applied to the book, so the log stays the source of
 * truth; reads come from the book, or for the audit view from the log itself.
 *
 * <p>Threading: call every method on the gateway's context, where the book lives and the futures
 * complete; the log is written and read through an {@link AuditWriter}, on its thread.
 */
public final class JobLedger {

  private final AuditWriter audit;
  private final JobBook book;
  private JobMetrics metrics;

  /** Replays {@code log}: call before the gateway serves anything, on the gateway's context. */
  public JobLedger(Vertx vertx, AuditLog log) {
    // Read once, before the gateway serves anything: the log is in memory and no append can hold it
    // yet.
    this.book = JobBook.replay(log.entries());
    this.audit = new AuditWriter(vertx, log);
  }

  /** Counts job starts and ends from now on. */
  public void measure(JobMetrics jobMetrics) {
    this.metrics = jobMetrics;
  }

  public Optional<Job> get(String id) {
    return book.get(id);
  }

  /** The job {@code id} of {@code repo}, or a {@link RequestException.NotFound} naming both. */
  public Job get(String repo, String id) {
    return get(id)
        .filter(j -> j.repo().equals(repo))
        .orElseThrow(
            () -> new RequestException.NotFound("no job " + id + " in repository " + repo));
  }

  /** The jobs of {@code repo}, or of every repository when null. */
  public List<Job> list(String repo) {
    return book.list(repo);
  }

  /** The job's review comments, oldest first; see {@code review.ReviewComments}. */
  public List<JsonObject> comments(String id) {
    return book.comments(id);
  }

  /**
   * The chain of revisions the job is in, from the first job to the latest revision; just the job
   * when it is in none.
   */
  public List<Job> revisions(Job job) {
    return book.revisions(job);
  }

  /** The attempts of one best-of-N group, oldest first; empty for an unknown group. */
  public List<Job> group(String group) {
    return book.group(group);
  }

  /** Jobs that have not finished, the gateway's recovery and deadline checks go through. */
  List<Job> unfinished() {
    return book.unfinished();
  }

  /**
   * The audit entries about {@code repo} (directly or through one of its jobs) and {@code job};
   * null for all.
   */
  public Future<List<JsonObject>> auditEntries(String repo, String job) {
    return audit.entries(auditFilter(repo, job));
  }

  /**
   * The same entries as {@link #auditEntries}, as the lines the log stores (for verifying their
   * hashes).
   */
  public Future<List<String>> auditLines(String repo, String job) {
    return audit.lines(auditFilter(repo, job));
  }

  /**
   * Runs on the audit thread: it reads which jobs are the repository's from a copy taken here, not
   * the book.
   */
  private Predicate<JsonObject> auditFilter(String repo, String job) {
    Set<String> repoJobs =
        repo == null
            ? Set.of()
            : book.list(repo).stream().map(Job::id).collect(Collectors.toUnmodifiableSet());
    return e ->
        (repo == null || repo.equals(e.getString("repo")) || repoJobs.contains(e.getString("job")))
            && (job == null || job.equals(e.getString("job")));
  }

  /**
   * Appends a {@code review_comment} entry {@code review.ReviewComments} built, then applies it;
   * the future carries the comment as listed.
   */
  public Future<JsonObject> recordComment(ReviewComment comment) {
    return audit
        .append(AuditEventCodec.encode(comment))
        .map(
            stored -> {
              apply(stored);
              return JobBook.commentOf(stored);
            });
  }

  /** Appends {@code event} to the audit log, then applies it to the book. */
  Future<Job> record(AuditEvent event) {
    return record(event, Future::succeededFuture);
  }

  /**
   * Appends {@code event} to the audit log, runs {@code beforeApplying} once it is stored, then
   * applies it. The entry is applied even when {@code beforeApplying} fails, since it is in the log
   * for good: the failure is returned afterwards, so the caller can retry the step (a redelivered
   * end revokes the token again).
   */
  Future<Job> record(AuditEvent event, Supplier<Future<Void>> beforeApplying) {
    return audit
        .append(AuditEventCodec.encode(event))
        .compose(
            stored ->
                beforeApplying
                    .get()
                    .transform(
                        done -> {
                          Job job = apply(stored);
                          return done.succeeded()
                              ? Future.succeededFuture(job)
                              : Future.failedFuture(done.cause());
                        }));
  }

  /**
   * Runs {@code blocking} on the audit thread after the appends already handed to it: for a file
   * write that must follow the entry it is about.
   */
  <T> Future<T> runAfterAppends(Callable<T> blocking) {
    return audit.runAfter(blocking);
  }

  private Job apply(JsonObject stored) {
    AuditEventCodec.Entry entry = AuditEventCodec.decode(stored);
    Job job =
        book.apply(entry)
            .orElseThrow(() -> new RequestException.NotFound("no job " + entry.event().job()));
    if (metrics != null && entry.event() instanceof JobStarted) {
      metrics.started(job);
    } else if (metrics != null && entry.event() instanceof JobFinished) {
      metrics.finished(job);
    }
    return job;
  }
}
