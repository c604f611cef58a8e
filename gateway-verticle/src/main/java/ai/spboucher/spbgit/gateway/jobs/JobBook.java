package ai.spboucher.spbgit.gateway.jobs;

import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Every job's current state, derived only from audit entries: {@link #apply} is how the gateway
 * updates a job after logging the change, and how it rebuilds all jobs from the log at start-up.
 * Entries that would move a job backwards (a late "started" after "finished", a duplicate) change
 * nothing, so replaying is idempotent.
 *
 * <p>Not thread-safe: owned by the {@link JobLedger}, on the gateway verticle's context.
 */
public final class JobBook {

  /** Audit event names. */
  public static final String CREATED = AuditEventCodec.nameOf(JobCreated.class);

  public static final String DISPATCHED = AuditEventCodec.nameOf(JobDispatched.class);
  public static final String STARTED = AuditEventCodec.nameOf(JobStarted.class);
  public static final String REFS_WRITTEN = AuditEventCodec.nameOf(RefsWritten.class);
  public static final String FINISHED = AuditEventCodec.nameOf(JobFinished.class);
  public static final String APPROVED = AuditEventCodec.nameOf(JobApproved.class);
  public static final String REJECTED = AuditEventCodec.nameOf(JobRejected.class);
  public static final String SUPERSEDED = AuditEventCodec.nameOf(JobSuperseded.class);
  public static final String REFS_DELETED = AuditEventCodec.nameOf(RefsDeleted.class);
  public static final String REVIEW_COMMENT = AuditEventCodec.nameOf(ReviewComment.class);
  public static final String REVISED = AuditEventCodec.nameOf(JobRevised.class);
  public static final String REFUSED = AuditEventCodec.nameOf(JobRefused.class);

  /** Refs listed per job: as many as a job may have at once. */
  static final int MAX_REFS_LISTED = RefsWritten.MAX_REFS_LISTED;

  private final Map<String, Job> jobs = new LinkedHashMap<>();

  /** Each job's review comments in the order they were logged, as {@link #commentOf} shows them. */
  private final Map<String, List<JsonObject>> comments = new HashMap<>();

  public static JobBook replay(List<JsonObject> entries) {
    JobBook book = new JobBook();
    entries.forEach(book::apply);
    return book;
  }

  /**
   * Applies one audit entry; returns the job as it is afterwards, if the entry concerned a known
   * job.
   */
  public Optional<Job> apply(JsonObject entry) {
    return apply(AuditEventCodec.decode(entry));
  }

  /** Applies one stored event; as {@link #apply(JsonObject)}. */
  public Optional<Job> apply(AuditEventCodec.Entry entry) {
    AuditEvent event = entry.event();
    String id = event.job();
    if (id == null || event.event() == null) {
      return Optional.empty();
    }
    if (event instanceof JobCreated created) {
      jobs.putIfAbsent(id, created.toJob(entry.ts()));
      Job job = jobs.get(id);
      // The link back is the revision's own entry: job_revised only says it on the revised job.
      if (job.revision() != null) {
        linkRevision(job.revision().revises(), id);
      }
      return Optional.of(job);
    }
    Job job = jobs.get(id);
    if (job == null) {
      return Optional.empty();
    }
    if (event instanceof ReviewComment comment) {
      addComment(id, entry.seq(), comment.listed(entry.seq(), entry.ts()));
      return Optional.of(job);
    }
    if (event instanceof JobRevised revised) {
      linkRevision(id, revised.revisedBy());
      return Optional.of(jobs.get(id));
    }
    Job next = event.applyTo(job, entry.ts());
    jobs.put(id, next);
    return Optional.of(next);
  }

  /**
   * Marks {@code revised} as revised by {@code revision}: the newest revision wins (ids grow with
   * time), so replaying either entry again, in any order, changes nothing.
   */
  private void linkRevision(String revised, String revision) {
    Job job = jobs.get(revised);
    if (job == null
        || revision == null
        || (job.revisedBy() != null && job.revisedBy().compareTo(revision) >= 0)) {
      return;
    }
    jobs.put(revised, job.with(b -> b.revisedBy = revision));
  }

  /**
   * The chain of revisions {@code job} is in, from the first job to the latest revision (just the
   * job when it is in none).
   */
  public List<Job> revisions(Job job) {
    List<Job> chain = new ArrayList<>();
    // Back to the first job, then on along the newest revisions: each step goes to a job of
    // another age (ids only grow), so neither walk can loop; the size check is a guard all the
    // same.
    for (Job at = job; at != null && chain.size() <= jobs.size(); at = previousRevision(at)) {
      chain.add(0, at);
    }
    for (Job at = nextRevision(job);
        at != null && chain.size() <= jobs.size();
        at = nextRevision(at)) {
      chain.add(at);
    }
    return chain;
  }

  private Job previousRevision(Job job) {
    return job.revision() == null ? null : jobs.get(job.revision().revises());
  }

  private Job nextRevision(Job job) {
    return job.revisedBy() == null ? null : jobs.get(job.revisedBy());
  }

  public Optional<Job> get(String id) {
    return Optional.ofNullable(jobs.get(id));
  }

  /** Jobs of one repository (or all, with null), newest first. */
  public List<Job> list(String repo) {
    List<Job> list = new ArrayList<>();
    for (Job job : jobs.values()) {
      if (repo == null || repo.equals(job.repo())) {
        list.add(job);
      }
    }
    list.sort(Comparator.comparing(Job::id).reversed());
    return list;
  }

  /** The attempts of one best-of-N group, oldest first (empty for an unknown group). */
  public List<Job> group(String group) {
    return jobs.values().stream().filter(j -> group.equals(j.group())).toList();
  }

  /** The job's review comments, oldest first (empty for an unknown job). */
  public List<JsonObject> comments(String id) {
    return List.copyOf(comments.getOrDefault(id, List.of()));
  }

  /**
   * A {@code review_comment} entry as the API lists a comment: its id is the entry's sequence
   * number in the audit log.
   */
  public static JsonObject commentOf(JsonObject entry) {
    AuditEventCodec.Entry stored = AuditEventCodec.decode(entry);
    return ((ReviewComment) stored.event()).listed(stored.seq(), stored.ts());
  }

  /** Adds a comment unless the log showed it already (replaying is idempotent). */
  private void addComment(String id, Long seq, JsonObject comment) {
    List<JsonObject> list = comments.computeIfAbsent(id, k -> new ArrayList<>());
    if (list.isEmpty() || list.get(list.size() - 1).getLong("id") < (seq == null ? 0L : seq)) {
      list.add(comment);
    }
  }

  /** Jobs not finished yet. */
  public List<Job> unfinished() {
    return jobs.values().stream().filter(j -> !j.isFinished()).toList();
  }
}
