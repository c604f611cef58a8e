package ai.spboucher.spbgit.gateway.jobs;

import ai.spboucher.spbgit.hooks.PushGate;
import ai.spboucher.spbgit.proto.CodingAgent;
import io.vertx.core.json.JsonArray;
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
 * <p>Not thread-safe: owned by {@link JobService}, on the gateway verticle's context.
 */
public final class JobBook {

  /** Audit event names. */
  public static final String CREATED = "job_created";

  public static final String DISPATCHED = "job_dispatched";
  public static final String STARTED = "job_started";
  public static final String REFS_WRITTEN = "refs_written";
  public static final String FINISHED = "job_finished";
  public static final String APPROVED = "job_approved";
  public static final String REJECTED = "job_rejected";

  /** Another attempt of the job's group was approved. */
  public static final String SUPERSEDED = "job_superseded";

  public static final String REFS_DELETED = "refs_deleted";
  public static final String REVIEW_COMMENT = "review_comment";

  /** On the revised job: which job now revises its work. */
  public static final String REVISED = "job_revised";

  /**
   * A runner refused a request for the job (forged, altered, replayed...): recorded for the owner's
   * eyes, it changes nothing about the job.
   */
  public static final String REFUSED = "job_refused";

  /** Refs listed per job: as many as a job may have at once. */
  static final int MAX_REFS_LISTED = PushGate.MAX_REFS_PER_JOB;

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
    String id = entry.getString("job");
    String event = entry.getString("event");
    if (id == null || event == null) {
      return Optional.empty();
    }
    if (CREATED.equals(event)) {
      jobs.putIfAbsent(id, created(entry));
      Job created = jobs.get(id);
      // The link back is the revision's own entry: job_revised only says it on the revised job.
      if (created.revision() != null) {
        linkRevision(created.revision().revises(), id);
      }
      return Optional.of(created);
    }
    Job job = jobs.get(id);
    if (job == null) {
      return Optional.empty();
    }
    if (REVIEW_COMMENT.equals(event)) {
      addComment(id, entry);
      return Optional.of(job);
    }
    Job next =
        switch (event) {
          case DISPATCHED ->
              !Job.QUEUED.equals(job.status())
                  ? job
                  : job.with(
                      b -> {
                        b.status = Job.DISPATCHED;
                        b.queueSequence = entry.getLong("queue_seq", 0L);
                      });
          case STARTED ->
              job.isFinished() || Job.STARTED.equals(job.status())
                  ? job
                  : job.with(
                      b -> {
                        b.status = Job.STARTED;
                        b.runnerId = entry.getString("runner");
                        b.containerId = entry.getString("container");
                        b.startedAt = entry.getString("ts");
                        b.imageDigest = entry.getString("image_digest");
                        b.cache = entry.getString("cache");
                        b.agent = nonEmpty(entry.getString("agent"), job.agent());
                        b.agentVersion =
                            nonEmpty(entry.getString("agent_version"), job.agentVersion());
                        b.setup = withSetupFacts(b.setup, entry, "cache_key", "cache_producer");
                      });
          case REFS_WRITTEN ->
              job.with(
                  b -> b.refsWritten = latestPerRef(b.refsWritten, entry.getJsonArray("refs")));
          case FINISHED ->
              job.isFinished()
                  ? job
                  : job.with(
                      b -> {
                        b.status = Job.FINISHED;
                        b.exitReason = entry.getString("exit_reason");
                        b.runnerId = nonEmpty(entry.getString("runner"), job.runnerId());
                        b.containerId = nonEmpty(entry.getString("container"), job.containerId());
                        b.finishedAt = entry.getString("ts");
                        b.detail = entry.getString("detail");
                        if (entry.getString("provider") != null
                            || entry.getValue("input_tokens") != null) {
                          b.spend =
                              new JsonObject()
                                  .put("provider", entry.getString("provider"))
                                  .put("model", entry.getString("model"))
                                  .put("input_tokens", entry.getLong("input_tokens", 0L))
                                  .put("output_tokens", entry.getLong("output_tokens", 0L));
                        }
                        b.setup = withSetupFacts(b.setup, entry, "cache_note", "setup_changes");
                      });
          case APPROVED, REJECTED ->
              job.with(
                  b ->
                      b.decision =
                          new JsonObject()
                              .put("decision", APPROVED.equals(event) ? "approved" : "rejected")
                              .put("branch", entry.getString("branch"))
                              .put("sha", entry.getString("sha"))
                              .put("by", entry.getString("approver"))
                              .put("at", entry.getString("ts")));
          // Only an undecided attempt is superseded: the approval of a sibling never overrides
          // the owner's own decision on this one.
          case SUPERSEDED ->
              job.decision() != null
                  ? job
                  : job.with(
                      b ->
                          b.decision =
                              new JsonObject()
                                  .put("decision", "superseded")
                                  .put("superseded_by", entry.getString("superseded_by"))
                                  .put("by", entry.getString("approver"))
                                  .put("at", entry.getString("ts")));
          case REVISED -> {
            linkRevision(id, entry.getString("revised_by"));
            yield jobs.get(id);
          }
          // The genuine request may still run; a replay of a finished job's leaves it finished.
          case REFUSED -> job;
          default -> job;
        };
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
    return new JsonObject()
        .put("id", entry.getLong("seq"))
        .put("commit", entry.getString("commit"))
        .put("kind", entry.getString("kind"))
        .put("path", entry.getString("path"))
        .put("side", entry.getString("side"))
        .put("line", entry.getInteger("line"))
        .put("body", entry.getString("body"))
        .put("author", entry.getString("author"))
        .put("at", entry.getString("ts"));
  }

  /** Adds a comment unless the log showed it already (replaying is idempotent). */
  private void addComment(String id, JsonObject entry) {
    List<JsonObject> list = comments.computeIfAbsent(id, k -> new ArrayList<>());
    long seq = entry.getLong("seq", 0L);
    if (list.isEmpty() || list.get(list.size() - 1).getLong("id") < seq) {
      list.add(commentOf(entry));
    }
  }

  /** Jobs not finished yet. */
  public List<Job> unfinished() {
    return jobs.values().stream().filter(j -> !j.isFinished()).toList();
  }

  private static Job created(JsonObject e) {
    String exec = e.getString("exec");
    boolean isExec = exec != null && !exec.isBlank();
    return new Job(
        e.getString("job"),
        e.getString("repo"),
        e.getString("task"),
        e.getString("exec"),
        e.getString("test_command"),
        e.getString("base"),
        e.getString("base_sha"),
        e.getString("requester"),
        e.getString("token_id"),
        e.getString("token_expires"),
        e.getString("deadline"),
        Job.QUEUED,
        null,
        null,
        null,
        e.getString("ts"),
        null,
        null,
        null,
        List.of(),
        0,
        null,
        e.getString("model"),
        null,
        e.getJsonObject("environment"),
        null,
        null,
        // Jobs recorded before agents ran the built-in one.
        isExec ? null : e.getString("agent", CodingAgent.BUILTIN.id()),
        e.getString("agent_version"),
        e.getBoolean("exec_model", false),
        e.getString("instructions_blob"),
        e.getString("group"),
        recordedRevision(e),
        null,
        null);
  }

  private static Job.Revision recordedRevision(JsonObject e) {
    String revises = e.getString("revises");
    if (revises == null) {
      return null;
    }
    return new Job.Revision(
        revises,
        e.getString("revises_work", WorkRef.PROPOSAL.label()),
        e.getInteger("revision", 2),
        e.getString("original_base_sha"),
        e.getJsonObject("review"));
  }

  /**
   * The job's setup record with the {@code keys} the entry holds added; unchanged (null for a job
   * whose runner reported none) when it holds none of them.
   */
  private static JsonObject withSetupFacts(JsonObject setup, JsonObject entry, String... keys) {
    JsonObject facts = setup == null ? null : setup.copy();
    for (String key : keys) {
      Object value = entry.getValue(key);
      if (value != null) {
        facts = facts == null ? new JsonObject() : facts;
        facts.put(key, value);
      }
    }
    return facts;
  }

  private static String nonEmpty(String value, String fallback) {
    return value == null || value.isEmpty() ? fallback : value;
  }

  /**
   * The refs a job wrote, one entry per ref with its latest update, at most {@link
   * #MAX_REFS_LISTED}: the job JSON (and every list of jobs) stays small however often a job
   * pushed, also when replaying a log written before the push gate limited refs. The audit log
   * keeps every update.
   */
  private static List<JsonObject> latestPerRef(List<JsonObject> listed, JsonArray written) {
    Map<String, JsonObject> byRef = new LinkedHashMap<>();
    listed.forEach(r -> byRef.put(r.getString("ref"), r));
    if (written != null) {
      for (Object value : written) {
        if (value instanceof JsonObject r && r.getValue("ref") instanceof String ref) {
          // Re-inserted so the map's order is the order of the latest writes; token_id of older
          // logs is dropped.
          byRef.remove(ref);
          byRef.put(
              ref,
              new JsonObject()
                  .put("ref", ref)
                  .put("old", r.getString("old"))
                  .put("new", r.getString("new")));
        }
      }
    }
    List<JsonObject> latest = new ArrayList<>(byRef.values());
    return latest.size() <= MAX_REFS_LISTED
        ? latest
        : new ArrayList<>(latest.subList(latest.size() - MAX_REFS_LISTED, latest.size()));
  }
}
