package ai.spboucher.spbgit.gateway.jobs;

import io.vertx.core.json.JsonObject;
import java.util.List;
import java.util.function.Consumer;

/**
 * A job as the audit log says it is: an immutable snapshot, replaced as entries are applied. What
 * {@code job_created} recorded is kept as that event ({@link #created}, read through the accessors
 * below); the other components are what later events changed.
 *
 * @param created the job's {@code job_created} event
 * @param createdAt when it was logged
 * @param state where the job is in its lifecycle ({@link #status} is its API name)
 * @param refsWritten the refs the job's token wrote, one per ref with its latest update ({@code
 *     {ref, old, new}}), at most {@link JobBook#MAX_REFS_LISTED}, least recently written first
 * @param decided the owner's decision, or null ({@link #decision} is its API form); {@code
 *     superseded} for an attempt whose sibling was approved
 * @param spend the model spend the runner metered, or null
 * @param imageDigest the digest of the image the runner started, or null before the start
 * @param cache {@code hit}, {@code miss} or {@code none} once started (null from a runner older
 *     than them)
 * @param agent the coding agent of an llm-mode job ({@code CodingAgent.id()}, {@code builtin} for a
 *     job recorded before agents), as the runner reported it once started; null in exec mode
 * @param agentVersion the agent's version: the one the runner reported once started, before that
 *     the version the images pin; null when neither is known (the built-in agent before its start)
 * @param revisedBy the id of the job that revises this one's work (the latest, when an earlier
 *     revision left no work and the job was revised again), or null
 * @param setup what the runner reported of the setup phase, or null when it reported nothing: on a
 *     cache hit {@code cache_key} and {@code cache_producer {job, commit}} (from {@code
 *     job_started}), once finished {@code cache_note} (whether setup's cache was kept) and {@code
 *     setup_changes} (what setup changed in the checkout, none of it proposed) (from {@code
 *     job_finished})
 */
public record Job(
    JobCreated created,
    String createdAt,
    JobState state,
    String exitReason,
    String runnerId,
    String containerId,
    String startedAt,
    String finishedAt,
    String detail,
    List<JsonObject> refsWritten,
    long queueSequence,
    Decision decided,
    Spend spend,
    String imageDigest,
    String cache,
    String agent,
    String agentVersion,
    String revisedBy,
    JsonObject setup) {

  /**
   * A revision: a job started on the work of an earlier one ({@code revises}) with the owner's
   * review of it, to evolve that work in place.
   *
   * @param revises the id of the job whose work this one continues
   * @param work which work of it: {@code proposal}, or {@code partial} to continue a stopped job
   * @param number the revision's place in its chain: 2 for the first revision of a job (which is
   *     revision 1)
   * @param originalBaseSha the commit the chain's first job started from: what every revision's
   *     cumulative diff compares against, and what an approved revision must descend from
   * @param review {@code {"text", "comments": [ids]}}: the owner's request and the review comments
   *     the revision's task carries
   */
  public record Revision(
      String revises, String work, int number, String originalBaseSha, JsonObject review) {

    /** The ref the revision started from, e.g. {@code refs/agents/<revises>/proposal}. */
    public String workRef() {
      return "refs/agents/" + revises + "/" + work;
    }
  }

  /** The API names of the {@link JobState}es. */
  public static final String QUEUED = JobState.QUEUED.wire();

  public static final String DISPATCHED = JobState.DISPATCHED.wire();
  public static final String STARTED = JobState.STARTED.wire();
  public static final String FINISHED = JobState.FINISHED.wire();

  public Job {
    refsWritten = List.copyOf(refsWritten);
  }

  public String id() {
    return created.job();
  }

  public String repo() {
    return created.repo();
  }

  public String task() {
    return created.task();
  }

  /** The shell command of an exec-mode job; null or blank in llm mode. */
  public String execCommand() {
    return created.exec();
  }

  public String testCommand() {
    return created.testCommand();
  }

  /** The branch the job started from (and a revision is approved onto). */
  public String baseRef() {
    return created.base();
  }

  public String baseSha() {
    return created.baseSha();
  }

  /** The token id of the owner who asked for the job. */
  public String requesterTokenId() {
    return created.requester();
  }

  /** The id of the job's own token. */
  public String tokenId() {
    return created.tokenId();
  }

  public String tokenExpires() {
    return created.tokenExpires();
  }

  public String deadline() {
    return created.deadline();
  }

  /**
   * The model of an llm-mode job, or of an exec-mode job's model endpoint; null for an exec-mode
   * job without one.
   */
  public String model() {
    return created.model();
  }

  /**
   * The environment {@code job_created} recorded ({@code AgentEnvironment.toJson} with the blob
   * id), or null for a job recorded before environments.
   */
  public JsonObject environment() {
    return created.environment();
  }

  /** Whether an exec-mode job has the model endpoint (it named a {@code model}). */
  public boolean execModel() {
    return created.execModel();
  }

  /**
   * The blob id of the {@code AGENTS.md} a built-in agent job was given (from the default branch
   * when it was created), or null when it was given none.
   */
  public String instructionsBlob() {
    return created.instructionsBlob();
  }

  /** The id of the best-of-N group the job is one attempt of, or null for a lone job. */
  public String group() {
    return created.group();
  }

  /** What the job revises when it is a revision of an earlier job's work, or null. */
  public Revision revision() {
    return created.revision();
  }

  /** Whether the job runs a shell command (exec mode) rather than a coding agent (llm mode). */
  public boolean isExec() {
    String exec = execCommand();
    return exec != null && !exec.isBlank();
  }

  public boolean isFinished() {
    return state == JobState.FINISHED;
  }

  /** The API name of the job's {@link #state}: {@code queued}, {@code dispatched}... */
  public String status() {
    return state.wire();
  }

  /**
   * The owner's decision in its API form ({@link Decision#toJson}), or null while there is none.
   */
  public JsonObject decision() {
    return decided == null ? null : decided.toJson();
  }

  /** The job as {@code job_created} records it, logged at {@code at}. */
  static Job created(JobCreated e, String at) {
    return new Job(
        e,
        at,
        JobState.QUEUED,
        null,
        null,
        null,
        null,
        null,
        null,
        List.of(),
        0,
        null,
        null,
        null,
        null,
        e.agent(),
        e.agentVersion(),
        null,
        null);
  }

  /**
   * The job's setup record with {@code key} set to {@code value}; unchanged (null for a job whose
   * runner reported nothing of setup) when the value is null.
   */
  static JsonObject withSetupFacts(JsonObject setup, String key, Object value) {
    if (value == null) {
      return setup;
    }
    JsonObject facts = setup == null ? new JsonObject() : setup.copy();
    return facts.put(key, value);
  }

  /** The prefix of every ref this job may write, e.g. {@code refs/agents/<id>/}. */
  public String refPrefix() {
    return "refs/agents/" + id() + "/";
  }

  public String proposalRef() {
    return WorkRef.PROPOSAL.refOf(this);
  }

  /** A copy with some fields changed. */
  Job with(Consumer<JobChanges> changes) {
    JobChanges b = new JobChanges(this);
    changes.accept(b);
    return b.build();
  }

  /**
   * The API form ({@link JobView}); {@code work} is where the job's proposal and partial refs point
   * now, read by the caller.
   */
  public JsonObject toJson(WorkShas work) {
    return JobView.of(this, work);
  }

  /** The commit the job's chain of revisions started from: its own base unless a revision(). */
  public String originalBaseSha() {
    return revision() == null ? baseSha() : revision().originalBaseSha();
  }

  /** The image name the job needs a runner to offer. */
  public String image() {
    return environment() == null ? "base" : environment().getString("image", "base");
  }
}
