package ai.spboucher.spbgit.gateway.jobs;

import ai.spboucher.spbgit.hooks.PushGate;
import ai.spboucher.spbgit.proto.CodingAgent;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One event of the audit log of agent jobs (docs/protocol.md, "The audit log"): a record per event,
 * which knows its fields in the order the log writes them ({@link #toJson}, read back by {@link
 * AuditEventCodec}) and how it changes the job it is about ({@link #applyTo}).
 */
public sealed interface AuditEvent {

  /** The event's name in the log, e.g. {@code job_created}. */
  String event();

  /** The id of the job the event is about, or null for an event about none. */
  String job();

  /**
   * The event as the log stores it, without the {@code seq}, {@code ts} and {@code prev} it adds.
   */
  JsonObject toJson();

  /**
   * The job as this event leaves it; {@code at} is the entry's {@code ts}. Events that would move a
   * job backwards (a late start after the end, a duplicate) leave it as it is, so replaying is
   * idempotent. Unchanged by default: the event is recorded for the owner's eyes.
   */
  default Job applyTo(Job job, String at) {
    return job;
  }

  private static JsonObject head(AuditEvent event) {
    return new JsonObject().put("event", event.event()).put("job", event.job());
  }

  private static String nonEmpty(String value, String fallback) {
    return value == null || value.isEmpty() ? fallback : value;
  }

  /**
   * A job was recorded, before its request is queued. {@code mode} and {@code image} are recorded
   * for the reader; the job derives them from {@code exec} and {@code environment}.
   *
   * @param agent the coding agent, null in exec mode (a job recorded before agents ran the built-in
   *     one: {@link AuditEventCodec} reads it so)
   * @param revision what the job revises, or null
   */
  record JobCreated(
      String job,
      String repo,
      String requester,
      String task,
      String exec,
      String testCommand,
      String base,
      String tokenId,
      String tokenExpires,
      String deadline,
      String baseSha,
      String mode,
      String model,
      String agent,
      String agentVersion,
      boolean execModel,
      String image,
      JsonObject environment,
      String instructionsBlob,
      String group,
      Job.Revision revision)
      implements AuditEvent {

    public static final String EVENT = "job_created";

    @Override
    public String event() {
      return EVENT;
    }

    @Override
    public JsonObject toJson() {
      JsonObject json =
          head(this)
              .put("repo", repo)
              .put("requester", requester)
              .put("task", task)
              .put("exec", exec)
              .put("test_command", testCommand)
              .put("base", base)
              .put("token_id", tokenId)
              .put("token_expires", tokenExpires)
              .put("deadline", deadline)
              .put("base_sha", baseSha)
              .put("mode", mode)
              .put("model", model)
              .put("agent", agent)
              .put("agent_version", agentVersion)
              .put("exec_model", execModel)
              .put("image", image)
              .put("environment", environment)
              .put("instructions_blob", instructionsBlob)
              .put("group", group);
      if (revision != null) {
        json.put("revises", revision.revises())
            .put("revises_work", revision.work())
            .put("revision", revision.number())
            .put("original_base_sha", revision.originalBaseSha())
            .put("review", revision.review());
      }
      return json;
    }

    static JobCreated from(JsonObject e) {
      String exec = e.getString("exec");
      boolean isExec = exec != null && !exec.isBlank();
      String revises = e.getString("revises");
      return new JobCreated(
          e.getString("job"),
          e.getString("repo"),
          e.getString("requester"),
          e.getString("task"),
          exec,
          e.getString("test_command"),
          e.getString("base"),
          e.getString("token_id"),
          e.getString("token_expires"),
          e.getString("deadline"),
          e.getString("base_sha"),
          e.getString("mode"),
          e.getString("model"),
          // Jobs recorded before agents ran the built-in one.
          isExec ? null : e.getString("agent", CodingAgent.BUILTIN.id()),
          e.getString("agent_version"),
          Boolean.TRUE.equals(e.getBoolean("exec_model", false)),
          e.getString("image"),
          e.getJsonObject("environment"),
          e.getString("instructions_blob"),
          e.getString("group"),
          revises == null
              ? null
              : new Job.Revision(
                  revises,
                  e.getString("revises_work", WorkRef.PROPOSAL.label()),
                  e.getInteger("revision", 2),
                  e.getString("original_base_sha"),
                  e.getJsonObject("review")));
    }

    /** The job as it is once created, at {@code at}. */
    Job toJob(String at) {
      return Job.created(this, at);
    }
  }

  /** The queue stored the job's request as message {@code queueSeq}. */
  record JobDispatched(String job, long queueSeq) implements AuditEvent {

    public static final String EVENT = "job_dispatched";

    @Override
    public String event() {
      return EVENT;
    }

    @Override
    public JsonObject toJson() {
      return head(this).put("queue_seq", queueSeq);
    }

    static JobDispatched from(JsonObject e) {
      Long sequence = e.getLong("queue_seq", 0L);
      return new JobDispatched(e.getString("job"), sequence == null ? 0 : sequence);
    }

    @Override
    public Job applyTo(Job job, String at) {
      return job.state() != JobState.QUEUED
          ? job
          : job.with(
              b -> {
                b.state = JobState.DISPATCHED;
                b.queueSequence = queueSeq;
              });
    }
  }

  /**
   * A runner started the job.
   *
   * @param cache {@code hit}, {@code miss} or {@code none}; null from a runner older than them
   * @param cacheKey the key of the cache entry a hit restored, with who kept it ({@code
   *     cacheProducer}: {@code {job, commit}}); null without a hit
   */
  record JobStarted(
      String job,
      String runner,
      String container,
      String imageDigest,
      String cache,
      String agent,
      String agentVersion,
      String cacheKey,
      JsonObject cacheProducer)
      implements AuditEvent {

    public static final String EVENT = "job_started";

    @Override
    public String event() {
      return EVENT;
    }

    @Override
    public JsonObject toJson() {
      return head(this)
          .put("runner", runner)
          .put("container", container)
          .put("image_digest", imageDigest)
          .put("cache", cache)
          .put("agent", agent)
          .put("agent_version", agentVersion)
          .put("cache_key", cacheKey)
          .put("cache_producer", cacheProducer);
    }

    static JobStarted from(JsonObject e) {
      return new JobStarted(
          e.getString("job"),
          e.getString("runner"),
          e.getString("container"),
          e.getString("image_digest"),
          e.getString("cache"),
          e.getString("agent"),
          e.getString("agent_version"),
          e.getString("cache_key"),
          e.getJsonObject("cache_producer"));
    }

    @Override
    public Job applyTo(Job job, String at) {
      if (job.isFinished() || job.state() == JobState.STARTED) {
        return job;
      }
      return job.with(
          b -> {
            b.state = JobState.STARTED;
            b.runnerId = runner;
            b.containerId = container;
            b.startedAt = at;
            b.imageDigest = imageDigest;
            b.cache = cache;
            b.agent = nonEmpty(agent, job.agent());
            b.agentVersion = nonEmpty(agentVersion, job.agentVersion());
            b.setup = Job.withSetupFacts(b.setup, "cache_key", cacheKey);
            b.setup = Job.withSetupFacts(b.setup, "cache_producer", cacheProducer);
          });
    }
  }

  /**
   * A job token pushed: {@code refs} is {@code [{ref, old, new}]} (with {@code token_id} in logs of
   * older releases).
   */
  record RefsWritten(String job, String repo, String tokenId, JsonArray refs)
      implements AuditEvent {

    public static final String EVENT = "refs_written";

    /** Refs listed per job: as many as a job may have at once. */
    static final int MAX_REFS_LISTED = PushGate.MAX_REFS_PER_JOB;

    @Override
    public String event() {
      return EVENT;
    }

    @Override
    public JsonObject toJson() {
      return head(this).put("repo", repo).put("token_id", tokenId).put("refs", refs);
    }

    static RefsWritten from(JsonObject e) {
      return new RefsWritten(
          e.getString("job"), e.getString("repo"), e.getString("token_id"), e.getJsonArray("refs"));
    }

    @Override
    public Job applyTo(Job job, String at) {
      return job.with(b -> b.refsWritten = latestPerRef(b.refsWritten, refs));
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

  /**
   * The job ended: reported by its runner, or decided by the gateway (cancelled before a runner
   * took it, runner_lost, runner_error).
   *
   * @param cacheNote whether setup's cache was kept, or null (not written then)
   * @param setupChanges what setup changed in the checkout, or null (not written then)
   * @param spend the model spend the runner metered, or null (not written then)
   */
  record JobFinished(
      String job,
      String exitReason,
      String runner,
      String container,
      String detail,
      String cacheNote,
      JsonArray setupChanges,
      Spend spend)
      implements AuditEvent {

    public static final String EVENT = "job_finished";

    @Override
    public String event() {
      return EVENT;
    }

    @Override
    public JsonObject toJson() {
      JsonObject json =
          head(this)
              .put("exit_reason", exitReason)
              .put("runner", runner)
              .put("container", container)
              .put("detail", detail);
      if (cacheNote != null) {
        json.put("cache_note", cacheNote);
      }
      if (setupChanges != null) {
        json.put("setup_changes", setupChanges);
      }
      if (spend != null) {
        json.put("provider", spend.provider())
            .put("model", spend.model())
            .put("input_tokens", spend.inputTokens())
            .put("output_tokens", spend.outputTokens());
      }
      return json;
    }

    static JobFinished from(JsonObject e) {
      Spend spend = null;
      if (e.getString("provider") != null || e.getValue("input_tokens") != null) {
        spend =
            new Spend(
                e.getString("provider"),
                e.getString("model"),
                e.getLong("input_tokens", 0L),
                e.getLong("output_tokens", 0L));
      }
      return new JobFinished(
          e.getString("job"),
          e.getString("exit_reason"),
          e.getString("runner"),
          e.getString("container"),
          e.getString("detail"),
          e.getString("cache_note"),
          e.getJsonArray("setup_changes"),
          spend);
    }

    @Override
    public Job applyTo(Job job, String at) {
      if (job.isFinished()) {
        return job;
      }
      return job.with(
          b -> {
            b.state = JobState.FINISHED;
            b.exitReason = exitReason;
            b.runnerId = nonEmpty(runner, job.runnerId());
            b.containerId = nonEmpty(container, job.containerId());
            b.finishedAt = at;
            b.detail = detail;
            if (spend != null) {
              b.spend = spend;
            }
            b.setup = Job.withSetupFacts(b.setup, "cache_note", cacheNote);
            b.setup = Job.withSetupFacts(b.setup, "setup_changes", setupChanges);
          });
    }
  }

  /**
   * The owner approved the job's proposal: {@code branch} was fast-forwarded to {@code sha} ({@code
   * result} says how the branch moved).
   */
  record JobApproved(
      String job, String repo, String branch, String sha, String approver, String result)
      implements AuditEvent {

    public static final String EVENT = "job_approved";

    @Override
    public String event() {
      return EVENT;
    }

    @Override
    public JsonObject toJson() {
      return head(this)
          .put("repo", repo)
          .put("branch", branch)
          .put("sha", sha)
          .put("approver", approver)
          .put("result", result);
    }

    static JobApproved from(JsonObject e) {
      return new JobApproved(
          e.getString("job"),
          e.getString("repo"),
          e.getString("branch"),
          e.getString("sha"),
          e.getString("approver"),
          e.getString("result"));
    }

    @Override
    public Job applyTo(Job job, String at) {
      return job.with(b -> b.decided = Decision.approved(branch, sha, approver, at));
    }
  }

  /** The owner rejected the job's work. */
  record JobRejected(String job, String repo, String approver) implements AuditEvent {

    public static final String EVENT = "job_rejected";

    @Override
    public String event() {
      return EVENT;
    }

    @Override
    public JsonObject toJson() {
      return head(this).put("repo", repo).put("approver", approver);
    }

    static JobRejected from(JsonObject e) {
      return new JobRejected(e.getString("job"), e.getString("repo"), e.getString("approver"));
    }

    @Override
    public Job applyTo(Job job, String at) {
      return job.with(b -> b.decided = Decision.rejected(approver, at));
    }
  }

  /** Another attempt of the job's group, {@code supersededBy}, was approved. */
  record JobSuperseded(String job, String repo, String group, String supersededBy, String approver)
      implements AuditEvent {

    public static final String EVENT = "job_superseded";

    @Override
    public String event() {
      return EVENT;
    }

    @Override
    public JsonObject toJson() {
      return head(this)
          .put("repo", repo)
          .put("group", group)
          .put("superseded_by", supersededBy)
          .put("approver", approver);
    }

    static JobSuperseded from(JsonObject e) {
      return new JobSuperseded(
          e.getString("job"),
          e.getString("repo"),
          e.getString("group"),
          e.getString("superseded_by"),
          e.getString("approver"));
    }

    /**
     * Only an undecided attempt is superseded: the approval of a sibling never overrides the
     * owner's own decision on this one.
     */
    @Override
    public Job applyTo(Job job, String at) {
      return job.decided() != null
          ? job
          : job.with(b -> b.decided = Decision.superseded(supersededBy, approver, at));
    }
  }

  /** The owner deleted the job's refs ({@code refs}: the names that went). */
  record RefsDeleted(String job, String repo, JsonArray refs, String by) implements AuditEvent {

    public static final String EVENT = "refs_deleted";

    @Override
    public String event() {
      return EVENT;
    }

    @Override
    public JsonObject toJson() {
      return head(this).put("repo", repo).put("refs", refs).put("by", by);
    }

    static RefsDeleted from(JsonObject e) {
      return new RefsDeleted(
          e.getString("job"), e.getString("repo"), e.getJsonArray("refs"), e.getString("by"));
    }
  }

  /**
   * An owner's review comment on the job's work at {@code commit}; a summary comment has no {@code
   * path}, {@code side} or {@code line}. Its id is the entry's {@code seq}.
   */
  record ReviewComment(
      String job,
      String repo,
      String commit,
      String kind,
      String path,
      String side,
      Integer line,
      String body,
      String author)
      implements AuditEvent {

    public static final String EVENT = "review_comment";

    @Override
    public String event() {
      return EVENT;
    }

    @Override
    public JsonObject toJson() {
      return head(this)
          .put("repo", repo)
          .put("commit", commit)
          .put("kind", kind)
          .put("path", path)
          .put("side", side)
          .put("line", line)
          .put("body", body)
          .put("author", author);
    }

    static ReviewComment from(JsonObject e) {
      return new ReviewComment(
          e.getString("job"),
          e.getString("repo"),
          e.getString("commit"),
          e.getString("kind"),
          e.getString("path"),
          e.getString("side"),
          e.getInteger("line"),
          e.getString("body"),
          e.getString("author"));
    }

    /** The comment as the API lists it, logged as entry {@code seq} at {@code at}. */
    JsonObject listed(Long seq, String at) {
      return new JsonObject()
          .put("id", seq)
          .put("commit", commit)
          .put("kind", kind)
          .put("path", path)
          .put("side", side)
          .put("line", line)
          .put("body", body)
          .put("author", author)
          .put("at", at);
    }
  }

  /** On the revised job: {@code revisedBy} now revises its work. */
  record JobRevised(String job, String repo, String revisedBy, String requester)
      implements AuditEvent {

    public static final String EVENT = "job_revised";

    @Override
    public String event() {
      return EVENT;
    }

    @Override
    public JsonObject toJson() {
      return head(this).put("repo", repo).put("revised_by", revisedBy).put("requester", requester);
    }

    static JobRevised from(JsonObject e) {
      return new JobRevised(
          e.getString("job"),
          e.getString("repo"),
          e.getString("revised_by"),
          e.getString("requester"));
    }
  }

  /**
   * A runner refused a request for the job (forged, altered, replayed...): recorded for the owner's
   * eyes, it changes nothing about the job (the genuine request may still run; a replay of a
   * finished job's leaves it finished).
   */
  record JobRefused(String job, String repo, String runner, String reason) implements AuditEvent {

    public static final String EVENT = "job_refused";

    @Override
    public String event() {
      return EVENT;
    }

    @Override
    public JsonObject toJson() {
      return head(this).put("repo", repo).put("runner", runner).put("reason", reason);
    }

    static JobRefused from(JsonObject e) {
      return new JobRefused(
          e.getString("job"), e.getString("repo"), e.getString("runner"), e.getString("reason"));
    }
  }

  /**
   * An event that changes no job, kept as it was read: one about the log itself ({@code
   * torn_line_set_aside}), or one this release does not know.
   */
  record Other(JsonObject fields) implements AuditEvent {

    @Override
    public String event() {
      return fields.getString("event");
    }

    @Override
    public String job() {
      return fields.getValue("job") instanceof String id ? id : null;
    }

    @Override
    public JsonObject toJson() {
      return fields.copy();
    }
  }
}
