package ai.spboucher.spbgit.gateway.jobs;

import ai.spboucher.spbgit.gateway.audit.AuditLog;
import ai.spboucher.spbgit.gateway.audit.AuditWriter;
import ai.spboucher.spbgit.gateway.auth.JobTokens;
import ai.spboucher.spbgit.gateway.auth.Principal;
import ai.spboucher.spbgit.gateway.environment.AgentEnvironment;
import ai.spboucher.spbgit.gateway.environment.CacheKeyFiles;
import ai.spboucher.spbgit.gateway.environment.EnvironmentReading;
import ai.spboucher.spbgit.gateway.environment.RepositoryInstructions;
import ai.spboucher.spbgit.gateway.errors.RequestException;
import ai.spboucher.spbgit.gateway.repos.RepoName;
import ai.spboucher.spbgit.gateway.repos.RepositoryStore;
import ai.spboucher.spbgit.hooks.JobTokenSigner;
import ai.spboucher.spbgit.hooks.RefNames;
import ai.spboucher.spbgit.proto.CodingAgent;
import ai.spboucher.spbgit.proto.Environment;
import ai.spboucher.spbgit.proto.JobEvent;
import ai.spboucher.spbgit.proto.JobRequest;
import ai.spboucher.spbgit.proto.JobStatus;
import ai.spboucher.spbgit.proto.Limits;
import ai.spboucher.spbgit.proto.Mode;
import ai.spboucher.spbgit.proto.StatusChange;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import org.eclipse.jgit.lib.ObjectId;

/**
 * The job lifecycle on the gateway: create (audit, token, queue), follow (status events from
 * runners), cancel, and end (audit, revoke the token). Every change is appended to the audit log
 * first and only then applied to the {@link JobBook}, so the log stays the source of truth.
 *
 * <p>Threading: call every method on the gateway's context, where the book lives and the futures
 * complete; the audit log is written and read through an {@link AuditWriter}, the repositories read
 * and the job token signed on worker threads. {@link #recordRefsWritten} may be called from any
 * thread.
 */
public final class JobService {

  private static final System.Logger LOG = System.getLogger(JobService.class.getName());

  /** How long a job may wait in the queue on top of its wall-clock limit before it is given up. */
  static final Duration QUEUE_ALLOWANCE = Duration.ofMinutes(10);

  /** Slack after the deadline before an unfinished job is declared lost. */
  static final Duration LOST_AFTER = Duration.ofMinutes(3);

  private final Vertx vertx;
  private final Context context;
  private final AuditWriter audit;
  private final JobBook book;
  private final JobTokens tokens;
  private final Function<RepoName, String> cloneUrl;
  private final Duration wallLimit;

  /**
   * The models llm-mode jobs may use, the default first; empty when no model provider is
   * configured.
   */
  private final List<String> models;

  private final Clock clock;
  private final Proposals proposals;
  private final RepositoryStore repos;
  private final RefusedRequests refusals;
  private JobQueue queue;
  private JobMetrics metrics;

  /** What requests carry between preparing and publishing that the audit log does not. */
  private final Map<String, Unrecorded> pending = new HashMap<>();

  /**
   * @param token the job token: a secret, never written to the audit log
   * @param instructions the text of {@code AGENTS.md}: the log records its blob id, which names it
   * @param cacheKeyFilesDigest the environment's cache key files at the base commit, hashed as the
   *     runner's cache key takes them ("" when unknown: {@link CacheKeyFiles})
   */
  private record Unrecorded(String token, String instructions, String cacheKeyFilesDigest) {}

  public JobService(
      Vertx vertx,
      AuditLog audit,
      JobTokens tokens,
      RepositoryStore repos,
      Function<RepoName, String> cloneUrl,
      Duration wallLimit,
      List<String> models,
      Clock clock) {
    this.vertx = vertx;
    this.context = vertx.getOrCreateContext();
    // Read once, before the gateway serves anything: the log is in memory and no append can hold it
    // yet.
    this.book = JobBook.replay(audit.entries());
    this.audit = new AuditWriter(vertx, audit);
    this.tokens = tokens;
    this.cloneUrl = cloneUrl;
    this.wallLimit = wallLimit;
    this.models = List.copyOf(models);
    this.clock = clock;
    this.proposals = new Proposals(repos);
    this.repos = repos;
    this.refusals = new RefusedRequests(book::get, this::record);
  }

  /** Counts job starts and ends from now on. */
  public void measure(JobMetrics jobMetrics) {
    this.metrics = jobMetrics;
  }

  /**
   * Attaches the job queue once connected; before that, creating and cancelling fail as
   * unavailable.
   */
  public void attach(JobQueue jobQueue) {
    this.queue = jobQueue;
    jobQueue.consumeStatus(context, this::onEvent);
  }

  public Optional<Job> get(String id) {
    return book.get(id);
  }

  public List<Job> list(String repo) {
    return book.list(repo);
  }

  /** The job's review comments, oldest first; see {@code review.ReviewComments}. */
  public List<JsonObject> comments(String id) {
    return book.comments(id);
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
   * Records and queues a job: in exec mode when it has an {@code exec} command (given the model
   * endpoint when it names a model), otherwise in llm mode with the named (or default) model and
   * coding agent, refused at once when no model provider is configured.
   */
  public Future<Job> create(RepoName repo, NewJob request, Principal.Owner owner) {
    return create(repo, request, owner, null, null);
  }

  /** The most attempts one best-of-N request may start. */
  public static final int MAX_ATTEMPTS = 4;

  /**
   * Records and queues {@code attempts} sibling jobs of one best-of-N group: each an ordinary job
   * (its own id, token, refs and gates) with the same task, base and environment, whose {@code
   * job_created} entry names the group. They are created one after the other, so a refusal (an
   * unknown model, a bad environment file) comes before any is recorded; the runners then take them
   * in parallel as they have slots. If a later attempt cannot be queued (the queue went away), the
   * group is not left half made behind the owner's back: the attempts already queued are cancelled,
   * and the refusal says so.
   *
   * @return the group's id and its jobs, in creation order
   */
  public Future<Map.Entry<String, List<Job>>> createGroup(
      RepoName repo, NewJob request, Principal.Owner owner, int attempts) {
    if (attempts < 1 || attempts > MAX_ATTEMPTS) {
      return Future.failedFuture(
          new RequestException.Invalid("'attempts' must be 1 to " + MAX_ATTEMPTS));
    }
    String group = JobIds.next(clock);
    List<Job> created = new ArrayList<>();
    Future<Void> chain = Future.succeededFuture();
    for (int i = 0; i < attempts; i++) {
      chain =
          chain
              .compose(v -> create(repo, request, owner, group, null).map(created::add))
              .mapEmpty();
    }
    return chain
        .map(v -> Map.entry(group, List.copyOf(created)))
        .recover(
            err ->
                created.isEmpty()
                    ? Future.failedFuture(err)
                    : cancelAttempts(created)
                        .transform(
                            cancelled ->
                                Future.failedFuture(
                                    new RequestException.Unavailable(
                                        "could not queue attempt "
                                            + (created.size() + 1)
                                            + " of "
                                            + attempts
                                            + " ("
                                            + err.getMessage()
                                            + "); "
                                            + (cancelled.succeeded()
                                                ? "the attempts already queued were cancelled: "
                                                : "the attempts already queued could not all be"
                                                    + " cancelled: ")
                                            + created.stream()
                                                .map(Job::id)
                                                .collect(Collectors.joining(", "))))));
  }

  /** Cancels each attempt that is not finished; fails if any cancel did. */
  private Future<Void> cancelAttempts(List<Job> attempts) {
    List<Future<Job>> cancels =
        attempts.stream()
            .filter(job -> !book.get(job.id()).map(Job::isFinished).orElse(true))
            .map(job -> cancel(job.id()))
            .toList();
    return Future.all(cancels).mapEmpty();
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

  /**
   * @param group the best-of-N group the job is an attempt of, or null
   * @param revision what the job revises (its base is that work, its environment the revised
   *     job's), or null for a job on its base branch with the default branch's environment
   */
  private Future<Job> create(
      RepoName repo, NewJob request, Principal.Owner owner, String group, Revising revision) {
    String model;
    Optional<CodingAgent> agent;
    JobQueue connected;
    try {
      agent = request.codingAgent();
      model = modelOf(request);
      if (RefNames.problemWith("refs/heads/" + request.baseBranch()).isPresent()) {
        throw new RequestException.Invalid("'base' must be a branch name");
      }
      connected = connectedQueue("the job queue (NATS) is not reachable; try again shortly");
    } catch (RequestException.Invalid | RequestException.Unavailable e) {
      return Future.failedFuture(e);
    }
    // The CLI agents read the checkout's own AGENTS.md, and an exec command is its own agent.
    boolean builtin = agent.filter(CodingAgent.BUILTIN::equals).isPresent();
    // JGit blocks reading the branch, the environment file and AGENTS.md; the token (about 0.6 ms
    // of CPU, see JobTokens) is signed on that thread too.
    return vertx
        .executeBlocking(() -> prepare(repo, request.baseBranch(), builtin, revision), false)
        .compose(
            prepared -> {
              pending.put(
                  prepared.id(),
                  new Unrecorded(
                      prepared.token().token(),
                      prepared.instructions().text(),
                      prepared.cacheKeyFilesDigest()));
              JobCreated created =
                  createdEvent(
                      prepared,
                      repo,
                      request,
                      model,
                      agent,
                      owner,
                      group,
                      revision == null ? null : revision.revision());
              return record(created)
                  .compose(job -> revision == null ? Future.succeededFuture(job) : linked(job))
                  .onFailure(e -> pending.remove(prepared.id()));
            })
        .compose(
            job ->
                connected
                    // Arguments are evaluated in order: request(job) reads the pending entry, which
                    // the token is then taken out of.
                    .publish(request(job), pending.remove(job.id()).token(), context)
                    .compose(sequence -> record(new JobDispatched(job.id(), sequence)))
                    .recover(
                        err ->
                            endByGateway(
                                    job.id(),
                                    "runner_error",
                                    "could not queue the job: " + err.getMessage())
                                .compose(
                                    j ->
                                        Future.failedFuture(
                                            new RequestException.Unavailable(
                                                "could not queue the job: " + err.getMessage())))));
  }

  /**
   * Records on the revised job that {@code revision} now revises it ({@code job_revised}), so the
   * audit shows the link from both ends; the future carries the revision.
   */
  private Future<Job> linked(Job revision) {
    String revised = revision.revision().revises();
    return record(
            new JobRevised(revised, revision.repo(), revision.id(), revision.requesterTokenId()))
        .map(v -> book.get(revision.id()).orElseThrow());
  }

  /** A revision as it is being created: its link to the revised job and the commit it starts on. */
  private record Revising(Job.Revision revision, String baseSha) {}

  /** Revisions being created, by the id of the job they revise; on the context. */
  private final Set<String> revising = new HashSet<>();

  /**
   * Starts a revision of a finished job: a new job on the job's proposal (or, without one, its
   * partial work, which is how partial work is continued), with the same agent, model and test
   * command, in the repository's environment as every job gets it (the default branch's file now:
   * an allow-list the owner tightened since the revised job ran is the one the revision gets),
   * whose task is the job's task followed by the owner's review ({@link RevisionTask}). An
   * exec-mode job is revised with a new command (and, optionally, test command). The revision is
   * linked both ways: its {@code job_created} names what it revises, and the revised job gets
   * {@code job_revised}.
   *
   * <p>Refused (409) while the job runs, while a revision of it runs or is being created, and once
   * a revision of it has work of its own (revise that one, the chain's latest); a revision that
   * ended without any work can be replaced by revising the job again.
   */
  public Future<Job> revise(Job previous, NewRevision request, Principal.Owner owner) {
    if (!previous.isFinished()) {
      return Future.failedFuture(
          new RequestException.Conflict(
              "job "
                  + previous.id()
                  + " has not finished (it is "
                  + previous.status()
                  + "): revise it once it has, or cancel it first"));
    }
    if (previous.isExec() && !request.isExec()) {
      return Future.failedFuture(
          new RequestException.Invalid(
              "job "
                  + previous.id()
                  + " is an exec job: revise it with a new 'exec' command (and optionally"
                  + " 'test_command')"));
    }
    if (!previous.isExec() && (request.isExec() || !request.testCommand().isEmpty())) {
      return Future.failedFuture(
          new RequestException.Invalid(
              "job "
                  + previous.id()
                  + " is an llm job: 'exec' and 'test_command' revise exec jobs only"));
    }
    Job latest = previous.revisedBy() == null ? null : book.get(previous.revisedBy()).orElse(null);
    if (latest != null && !latest.isFinished()) {
      return Future.failedFuture(
          new RequestException.Conflict(
              "job "
                  + previous.id()
                  + " is being revised by job "
                  + latest.id()
                  + ", which has not finished"));
    }
    if (!revising.add(previous.id())) {
      return Future.failedFuture(
          new RequestException.Conflict(
              "a revision of job " + previous.id() + " is being created"));
    }
    RepoName repo = RepoName.of(previous.repo());
    return vertx
        .executeBlocking(() -> workToRevise(repo, previous, latest), false)
        .compose(
            work -> {
              List<JsonObject> comments = commentsToAddress(previous, request, work.sha());
              if (!previous.isExec() && request.text().isBlank() && comments.isEmpty()) {
                throw new RequestException.Invalid(
                    "nothing to revise: give a 'task' (what to change) or review 'comments' to"
                        + " address ("
                        + (request.comments() == null
                            ? "job " + previous.id() + " has none on its " + work.which().noun()
                            : "none were named")
                        + ")");
              }
              int number = previous.revision() == null ? 2 : previous.revision().number() + 1;
              String task =
                  RevisionTask.compose(
                      previous.task(),
                      number,
                      work.which().label(),
                      work.sha(),
                      request.text(),
                      comments);
              NewJob asJob =
                  new NewJob(
                      task,
                      request.exec(),
                      nullToEmpty(previous.model()),
                      request.testCommand().isEmpty()
                          ? nullToEmpty(previous.testCommand())
                          : request.testCommand(),
                      previous.baseRef(),
                      previous.isExec() ? "" : nullToEmpty(previous.agent()));
              JsonObject review =
                  new JsonObject()
                      .put("text", request.text())
                      .put(
                          "comments",
                          new JsonArray(comments.stream().map(c -> c.getLong("id")).toList()));
              Job.Revision revision =
                  new Job.Revision(
                      previous.id(),
                      work.which().label(),
                      number,
                      previous.originalBaseSha(),
                      review);
              return create(repo, asJob, owner, null, new Revising(revision, work.sha()));
            })
        .andThen(done -> revising.remove(previous.id()));
  }

  private static String nullToEmpty(String value) {
    return value == null ? "" : value;
  }

  /** The work a revision continues: which ref and the commit it points at. */
  private record Work(WorkRef which, String sha) {}

  /**
   * Blocking: the revised job's proposal, or else its partial work; refused when it has neither, or
   * when {@code latest} (the job's current revision) has work of its own.
   */
  private Work workToRevise(RepoName repo, Job previous, Job latest) throws IOException {
    List<Job> jobs = latest == null ? List.of(previous) : List.of(previous, latest);
    Map<String, WorkShas> shas = proposals.workShas(repo, jobs);
    if (latest != null && shas.containsKey(latest.id())) {
      throw new RequestException.Conflict(
          "job "
              + previous.id()
              + " was revised by job "
              + latest.id()
              + ": revise that one, the latest revision");
    }
    WorkShas work = shas.getOrDefault(previous.id(), WorkShas.NONE);
    if (work.proposal() != null) {
      return new Work(WorkRef.PROPOSAL, work.proposal());
    }
    if (work.partial() != null) {
      return new Work(WorkRef.PARTIAL, work.partial());
    }
    throw new RequestException.Conflict(
        "job " + previous.id() + " left no proposal or partial work to revise");
  }

  /**
   * The comments the revision addresses: those named (each must be the job's), or without names
   * every comment on the work being revised.
   */
  private List<JsonObject> commentsToAddress(Job previous, NewRevision request, String sha) {
    List<JsonObject> all = book.comments(previous.id());
    if (request.comments() == null) {
      return all.stream().filter(c -> sha.equals(c.getString("commit"))).toList();
    }
    Map<Long, JsonObject> byId = new HashMap<>();
    all.forEach(c -> byId.put(c.getLong("id"), c));
    List<JsonObject> named = new ArrayList<>();
    for (Long id : new LinkedHashSet<>(request.comments())) {
      JsonObject comment = byId.get(id);
      if (comment == null) {
        throw new RequestException.Invalid("job " + previous.id() + " has no review comment " + id);
      }
      named.add(comment);
    }
    return named;
  }

  /**
   * The model of an llm-mode job (the default when it names none), of the model endpoint an
   * exec-mode job asks for by naming one, or null for an exec-mode job without the endpoint.
   */
  private String modelOf(NewJob request) {
    if (request.isExec() && request.model().isBlank()) {
      return null;
    }
    if (models.isEmpty()) {
      throw new RequestException.Invalid(
          request.isExec()
              ? "no model provider is configured (SPB_MODEL), so an exec job cannot have the"
                  + " model endpoint ('model')"
              : "no model provider is configured (SPB_MODEL), so jobs need an 'exec' shell"
                  + " command");
    }
    String model = request.model().isBlank() ? models.get(0) : request.model();
    if (!models.contains(model)) {
      throw new RequestException.Invalid(
          "model '" + model + "' is not allowed; allowed: " + String.join(", ", models));
    }
    return model;
  }

  private JobQueue connectedQueue(String refusal) {
    JobQueue current = queue;
    if (current == null || !current.isConnected()) {
      throw new RequestException.Unavailable(refusal);
    }
    return current;
  }

  /** Cancels a job that has not finished. */
  public Future<Job> cancel(String id) {
    Optional<Job> known = book.get(id);
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
      connected = connectedQueue("the job queue (NATS) is not reachable");
    } catch (RequestException.Unavailable e) {
      return Future.failedFuture(e);
    }
    return vertx
        .executeBlocking(() -> connected.cancel(id, job.queueSequence()), false)
        .compose(
            removedFromQueue ->
                removedFromQueue
                    ? endByGateway(id, "cancelled", "cancelled before a runner took it")
                    // A runner has it: the runner stops the container and reports the end.
                    : Future.succeededFuture(book.get(id).get()));
  }

  /**
   * Fast-forwards {@code branch} to the proposal the owner reviewed ({@code sha}); audited once, so
   * approving again with the same branch and commit is a no-op. Partial work is never approved
   * (409).
   */
  public Future<Job> approve(Job job, String branch, String sha, Principal.Owner owner) {
    if (!job.isFinished()) {
      return Future.failedFuture(
          new RequestException.Conflict(
              "job "
                  + job.id()
                  + " is still "
                  + job.status()
                  + "; approve it once it has finished"));
    }
    if (RefNames.problemWith("refs/heads/" + branch).isPresent()) {
      return Future.failedFuture(
          new RequestException.Invalid("'branch' must be a valid branch name"));
    }
    Decision decided = job.decided();
    if (decided != null && decided.is(Decision.Kind.REJECTED)) {
      return Future.failedFuture(
          new RequestException.Conflict("job " + job.id() + " was rejected"));
    }
    if (decided != null && decided.is(Decision.Kind.SUPERSEDED)) {
      return Future.failedFuture(supersededRefusal(job));
    }
    if (decided != null && (!branch.equals(decided.branch()) || !sha.equals(decided.sha()))) {
      return Future.failedFuture(
          new RequestException.Conflict(
              "job "
                  + job.id()
                  + " was already approved as "
                  + decided.sha()
                  + " on "
                  + decided.branch()));
    }
    return vertx
        .executeBlocking(() -> proposals.approve(RepoName.of(job.repo()), job, branch, sha), false)
        .compose(
            result ->
                decided != null
                    ? Future.succeededFuture(book.get(job.id()).get())
                    : record(
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

  /**
   * Records {@code job_superseded} for the approved job's undecided siblings, one entry each; their
   * refs stay until the owner deletes them. The group is that of the approved job's chain:
   * approving a revision of an attempt supersedes the other attempts (and the attempt it revised,
   * if still undecided), as approving the attempt itself would. The future carries the approved
   * job.
   */
  private Future<Job> supersedeSiblings(Job approved, Principal.Owner owner) {
    String group = book.revisions(approved).get(0).group();
    if (group == null) {
      return Future.succeededFuture(approved);
    }
    Future<Job> chain = Future.succeededFuture(approved);
    for (Job sibling : book.group(group)) {
      if (sibling.id().equals(approved.id()) || sibling.decided() != null) {
        continue;
      }
      chain =
          chain.compose(
              v ->
                  record(
                      new JobSuperseded(
                          sibling.id(), sibling.repo(), group, approved.id(), owner.tokenId())));
    }
    return chain.map(v -> book.get(approved.id()).orElse(approved));
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
    return record(new JobRejected(job.id(), job.repo(), owner.tokenId()));
  }

  /** Deletes {@code refs/agents/<job>/*} and audits which refs went. */
  public Future<List<String>> deleteRefs(Job job, Principal.Owner owner) {
    return vertx
        .executeBlocking(() -> proposals.deleteRefs(RepoName.of(job.repo()), job), false)
        .compose(
            deleted ->
                deleted.isEmpty()
                    ? Future.succeededFuture(deleted)
                    : record(
                            new RefsDeleted(
                                job.id(), job.repo(), new JsonArray(deleted), owner.tokenId()))
                        .map(j -> deleted));
  }

  /**
   * Records refs a job token pushed (from the receive-pack post-receive step): one entry per push,
   * bounded because the push gate admits at most {@code PushGate.MAX_REFS_PER_JOB} refs of bounded
   * length per push. Any thread.
   */
  public void recordRefsWritten(String jobId, String repo, String tokenId, JsonArray refs) {
    context.runOnContext(
        v ->
            record(new RefsWritten(jobId, repo, tokenId, refs))
                .onFailure(
                    e ->
                        LOG.log(
                            System.Logger.Level.ERROR, "cannot audit refs of job " + jobId, e)));
  }

  /**
   * Ends the jobs a previous run of the gateway left {@code queued}: it stopped between recording a
   * job and recording that the queue stored its request, so the job was never confirmed to the
   * owner (no 201). Whether the request reached the queue is unknown, and the job token is not kept
   * anywhere to send it again: such a job ends {@code runner_error}, as when publishing times out,
   * and its token is revoked, so a runner that still takes the request cannot push. Call once at
   * start-up, before status events are consumed.
   */
  public Future<Void> endInterruptedCreations() {
    List<Future<Job>> ended =
        book.unfinished().stream()
            .filter(job -> job.state() == JobState.QUEUED)
            .map(
                job ->
                    endByGateway(
                        job.id(), "runner_error", "the gateway stopped before the job was queued"))
            .toList();
    return Future.all(ended).mapEmpty();
  }

  /**
   * Declares jobs lost that no runner finished by their deadline; the future completes once they
   * are ended.
   */
  public Future<Void> reapOverdueJobs() {
    Instant now = clock.instant();
    List<Future<Job>> ended =
        book.unfinished().stream()
            .filter(
                job ->
                    job.deadline() != null
                        && Instant.parse(job.deadline()).plus(LOST_AFTER).isBefore(now))
            .map(
                job ->
                    endByGateway(
                        job.id(), "runner_lost", "no runner reported an end by the deadline"))
            .toList();
    return Future.all(ended).mapEmpty();
  }

  private Future<?> onEvent(JobEvent event) {
    if (event.hasRefusal()) {
      return refusals.onRefusal(event);
    }
    Optional<Job> known = book.get(event.getJobId());
    if (!event.hasStatus() || known.isEmpty()) {
      return Future.succeededFuture();
    }
    StatusChange change = event.getStatus();
    if (known.get().isFinished()) {
      // The first end is final (the gateway may have decided it itself, say runner_lost at the
      // deadline).
      Job job = known.get();
      LOG.log(
          System.Logger.Level.INFO,
          "job "
              + job.id()
              + " already finished ("
              + job.exitReason()
              + "): ignoring a late "
              + change.getStatus()
              + describe(change)
              + " from runner '"
              + change.getRunnerId()
              + "'");
      // It may also be the redelivery of an end whose token revocation failed: make sure the token
      // is revoked.
      return revokeToken(job);
    }
    if (change.getStatus() == JobStatus.STARTED && known.get().state() == JobState.STARTED) {
      return Future.succeededFuture(); // A redelivered start.
    }
    if (change.getStatus() == JobStatus.STARTED) {
      return record(RunnerReports.started(event.getJobId(), change));
    }
    if (change.getStatus() == JobStatus.FINISHED) {
      return finish(RunnerReports.finished(event.getJobId(), change));
    }
    return Future.succeededFuture();
  }

  private static String describe(StatusChange change) {
    return change.getStatus() == JobStatus.FINISHED ? " (" + change.getExitReason() + ")" : "";
  }

  /**
   * Ends a job: audits the end (with the model spend the runner metered, for llm jobs) and revokes
   * its token so it cannot push any more; only then is the job shown finished, so no finished job
   * has a live token.
   */
  private Future<Job> finish(JobFinished end) {
    return record(
        end,
        () ->
            book.get(end.job()).map(this::revokeToken).orElse(Future.succeededFuture()).mapEmpty());
  }

  /** Ends a job as the gateway decided: see {@link #finish(JobFinished)}. */
  private Future<Job> endByGateway(String id, String reason, String detail) {
    return finish(RunnerReports.endedByGateway(id, reason, detail));
  }

  private Future<Job> revokeToken(Job job) {
    if (tokens.isRevoked(job.tokenId())) {
      return Future.succeededFuture(job);
    }
    return audit.runAfter(
        () -> {
          tokens.revoke(job.tokenId(), Instant.parse(job.tokenExpires()));
          return job;
        });
  }

  /** Appends {@code event} to the audit log, then applies it to the book. */
  private Future<Job> record(AuditEvent event) {
    return record(event, Future::succeededFuture);
  }

  /**
   * Appends {@code entry} to the audit log, runs {@code beforeApplying} once it is stored, then
   * applies it. The entry is applied even when {@code beforeApplying} fails, since it is in the log
   * for good: the failure is returned afterwards, so the caller can retry the step (a redelivered
   * end revokes the token again).
   */
  private Future<Job> record(AuditEvent event, Supplier<Future<Void>> beforeApplying) {
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

  /**
   * A new job's id, deadline, signed token, base commit, environment and instructions (both from
   * the default branch), before anything is recorded, with the digest of the environment's cache
   * key files at the base commit ("" when there is no setup or it cannot be read exactly: {@link
   * CacheKeyFiles}).
   */
  private record Prepared(
      String id,
      Instant deadline,
      JobTokenSigner.Issued token,
      String baseSha,
      AgentEnvironment environment,
      RepositoryInstructions instructions,
      String cacheKeyFilesDigest) {}

  /**
   * Blocking: reads the base branch, the environment file of the default branch, the cache key
   * files at the base commit and, for a job of the built-in agent, its {@code AGENTS.md}, and signs
   * the job's token. A revision starts on the work it revises; its base branch must still exist
   * (the job clones it).
   *
   * @throws ai.spboucher.spbgit.gateway.environment.EnvironmentFileException when the file cannot
   *     be used
   * @throws ai.spboucher.spbgit.gateway.environment.InstructionsFileException when {@code
   *     AGENTS.md} cannot be given to the agent
   */
  private Prepared prepare(RepoName repo, String baseRef, boolean builtin, Revising revision)
      throws IOException {
    String branchSha = requireBranch(repo, baseRef);
    String baseSha = revision == null ? branchSha : revision.baseSha();
    // Setup runs, and the cache is keyed, on owner-trusted content only: a revision's on its
    // chain's original base, never on the agent-written work it revises.
    String setupSha = revision == null ? branchSha : revision.revision().originalBaseSha();
    AgentEnvironment environment;
    RepositoryInstructions instructions = RepositoryInstructions.NONE;
    String cacheKeyFilesDigest = "";
    try (var repository = repos.open(repo)) {
      environment = EnvironmentReading.of(repository).require();
      if (builtin) {
        instructions = RepositoryInstructions.of(repository);
      }
      // Only a setup phase is cached; with the digest a runner's cache hit needs no clone
      // container.
      if (!environment.setup().isEmpty() && !environment.cache().isEmpty()) {
        cacheKeyFilesDigest =
            CacheKeyFiles.digest(
                    repository, ObjectId.fromString(setupSha), environment.cacheKeyFiles())
                .orElse("");
      }
    }
    String id = JobIds.next(clock);
    Instant deadline = clock.instant().plus(wallLimit).plus(QUEUE_ALLOWANCE);
    JobTokenSigner.Issued token =
        tokens.issueToken(
            id, repo.value(), Duration.between(clock.instant(), deadline).plusMinutes(2));
    return new Prepared(
        id, deadline, token, baseSha, environment, instructions, cacheKeyFilesDigest);
  }

  /**
   * The request's test command wins over the environment's default ({@code test} in the file). An
   * llm job's agent is recorded with the version the images pin (null for the built-in agent, whose
   * version is the runner's agent jar: {@code job_started} says which).
   */
  private static JobCreated createdEvent(
      Prepared job,
      RepoName repo,
      NewJob request,
      String model,
      Optional<CodingAgent> agent,
      Principal.Owner owner,
      String group,
      Job.Revision revision) {
    String testCommand =
        request.testCommand().isEmpty() ? job.environment().test() : request.testCommand();
    return new JobCreated(
        job.id(),
        repo.value(),
        owner.tokenId(),
        request.task(),
        request.exec(),
        testCommand,
        request.baseBranch(),
        job.token().tokenId(),
        job.token().expiresAt().toString(),
        job.deadline().toString(),
        job.baseSha(),
        request.isExec() ? "exec" : "llm",
        model,
        agent.map(CodingAgent::id).orElse(null),
        agent.map(CodingAgent::pinnedVersion).filter(v -> !v.isEmpty()).orElse(null),
        request.isExec() && model != null,
        job.environment().image(),
        job.environment().toJson().put("blob", job.environment().blob()),
        job.instructions().blob(),
        group,
        revision);
  }

  private JobRequest request(Job job) {
    Unrecorded unrecorded = pending.get(job.id());
    return JobRequest.newBuilder()
        .setJobId(job.id())
        .setRepo(job.repo())
        .setCloneUrl(cloneUrl.apply(RepoName.of(job.repo())))
        .setBaseRef(job.baseRef())
        .setTask(job.task())
        .setMode(job.isExec() ? Mode.MODE_EXEC : Mode.MODE_LLM)
        .setModel(job.model() == null ? "" : job.model())
        .setAgent(job.isExec() ? "" : job.agent())
        .setExecModel(job.execModel())
        .setExecCommand(job.execCommand() == null ? "" : job.execCommand())
        .setTestCommand(job.testCommand() == null ? "" : job.testCommand())
        .setLimits(Limits.newBuilder().setWallSeconds(wallLimit.toSeconds()))
        .setEnvironment(
            environmentOf(job).toBuilder().setCacheKeyFilesDigest(unrecorded.cacheKeyFilesDigest()))
        .setBaseSha(job.baseSha() == null ? "" : job.baseSha())
        .setBaseWorkRef(job.revision() == null ? "" : job.revision().workRef())
        .setSetupSha(job.originalBaseSha() == null ? "" : job.originalBaseSha())
        .setInstructions(unrecorded.instructions())
        .setInstructionsBlob(job.instructionsBlob() == null ? "" : job.instructionsBlob())
        .setDeadlineEpochMs(Instant.parse(job.deadline()).toEpochMilli())
        .setCreatedEpochMs(clock.millis())
        .build();
  }

  /**
   * The wire form of the environment {@code job_created} recorded; the defaults for a job recorded
   * before them.
   */
  private static Environment environmentOf(Job job) {
    JsonObject recorded =
        job.environment() == null ? AgentEnvironment.NONE.toJson() : job.environment();
    return Environment.newBuilder()
        .setImage(recorded.getString("image", AgentEnvironment.DEFAULT_IMAGE))
        .setSetup(recorded.getString("setup", ""))
        .addAllSetupEgress(strings(recorded, "setup_egress"))
        .addAllEgress(strings(recorded, "egress"))
        .addAllCache(strings(recorded, "cache"))
        .addAllCacheKeyFiles(strings(recorded, "cache_key_files"))
        .setHash(recorded.getString("hash", ""))
        .build();
  }

  private static List<String> strings(JsonObject json, String key) {
    JsonArray array = json.getJsonArray(key, new JsonArray());
    return array.stream().map(String::valueOf).toList();
  }

  private String requireBranch(RepoName repo, String base) throws IOException {
    String sha = proposals.branchSha(repo, base);
    if (sha == null) {
      throw new RequestException.Conflict(
          "repository " + repo + " has no branch '" + base + "' to start from");
    }
    return sha;
  }
}
