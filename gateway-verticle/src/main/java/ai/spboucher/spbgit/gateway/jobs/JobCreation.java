package ai.spboucher.spbgit.gateway.jobs;

import ai.spboucher.spbgit.gateway.auth.Principal;
import ai.spboucher.spbgit.gateway.errors.RequestException;
import ai.spboucher.spbgit.gateway.repos.RepoName;
import ai.spboucher.spbgit.hooks.RefNames;
import ai.spboucher.spbgit.proto.CodingAgent;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;
import java.util.stream.Collectors;

/**
 * Creating jobs: checks what the gateway allows (model, agent, base branch), prepares the job on a
 * worker (base commit, environment, instructions, signed token), records {@code job_created}, then
 * queues the request and records {@code job_dispatched}. Best-of-N groups are sibling jobs created
 * one after the other; revisions ({@link JobRevisions}) are created here too, on the work they
 * revise.
 *
 * <p>Threading: call on the gateway's context, as the {@link JobLedger}.
 */
public final class JobCreation {

  private final Vertx vertx;
  private final Context context;
  private final JobLedger ledger;
  private final JobPreparation preparation;
  private final QueueConnection queue;
  private final JobEnding ending;
  private final JobDecisions decisions;
  private final Function<RepoName, String> cloneUrl;
  private final Duration wallLimit;
  private final Clock clock;

  /**
   * The models llm-mode jobs may use, the default first; empty when no model provider is
   * configured.
   */
  private final List<String> models;

  /** What requests carry between preparing and publishing that the audit log does not. */
  private final Map<String, Unrecorded> pending = new HashMap<>();

  /**
   * @param token the job token: a secret, never written to the audit log
   * @param instructions the text of {@code AGENTS.md}: the log records its blob id, which names it
   * @param cacheKeyFilesDigest see {@link JobRequests#of}
   */
  private record Unrecorded(String token, String instructions, String cacheKeyFilesDigest) {}

  /** A revision as it is being created: its link to the revised job and the commit it starts on. */
  record Revising(Job.Revision revision, String baseSha) {}

  JobCreation(
      Vertx vertx,
      JobLedger ledger,
      JobPreparation preparation,
      QueueConnection queue,
      JobEnding ending,
      JobDecisions decisions,
      Function<RepoName, String> cloneUrl,
      Duration wallLimit,
      List<String> models,
      Clock clock) {
    this.vertx = vertx;
    this.context = vertx.getOrCreateContext();
    this.ledger = ledger;
    this.preparation = preparation;
    this.queue = queue;
    this.ending = ending;
    this.decisions = decisions;
    this.cloneUrl = cloneUrl;
    this.wallLimit = wallLimit;
    this.models = List.copyOf(models);
    this.clock = clock;
  }

  /**
   * Records and queues a job: in exec mode when it has an {@code exec} command (given the model
   * endpoint when it names a model), otherwise in llm mode with the named (or default) model and
   * coding agent, refused at once when no model provider is configured.
   */
  public Future<Job> create(RepoName repo, NewJob request, Principal.Owner owner) {
    return create(repo, request, owner, null, null);
  }

  /**
   * Records and queues {@code attempts} sibling jobs of one best-of-N group: each an ordinary job
   * (its own id, token, refs and gates) with the same task, base and environment, whose {@code
   * job_created} entry names the group. They are created one after the other, so a refusal (an
   * unknown model, a bad environment file) comes before any is recorded; the runners then take them
   * in parallel as they have slots. If a later attempt cannot be queued (the queue went away), the
   * group is not left half made behind the owner's back: the attempts already queued are cancelled,
   * and the refusal says so.
   *
   * @param attempts how many, as the API's document bounds it ({@code createJob}'s {@code
   *     attempts})
   * @return the group's id and its jobs, in creation order
   */
  public Future<Map.Entry<String, List<Job>>> createGroup(
      RepoName repo, NewJob request, Principal.Owner owner, int attempts) {
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
                                    groupRefusal(err, created, attempts, cancelled.succeeded()))));
  }

  private static RequestException.Unavailable groupRefusal(
      Throwable err, List<Job> created, int attempts, boolean cancelled) {
    return new RequestException.Unavailable(
        "could not queue attempt "
            + (created.size() + 1)
            + " of "
            + attempts
            + " ("
            + err.getMessage()
            + "); "
            + (cancelled
                ? "the attempts already queued were cancelled: "
                : "the attempts already queued could not all be cancelled: ")
            + created.stream().map(Job::id).collect(Collectors.joining(", ")));
  }

  /** Cancels each attempt that is not finished; fails if any cancel did. */
  private Future<Void> cancelAttempts(List<Job> attempts) {
    List<Future<Job>> cancels =
        attempts.stream()
            .filter(job -> !ledger.get(job.id()).map(Job::isFinished).orElse(true))
            .map(job -> decisions.cancel(job.id()))
            .toList();
    return Future.all(cancels).mapEmpty();
  }

  /**
   * @param group the best-of-N group the job is an attempt of, or null
   * @param revision what the job revises (its base is that work, its environment the revised
   *     job's), or null for a job on its base branch with the default branch's environment
   */
  Future<Job> create(
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
      connected = queue.require("the job queue (NATS) is not reachable; try again shortly");
    } catch (RequestException.Invalid | RequestException.Unavailable e) {
      return Future.failedFuture(e);
    }
    // The CLI agents read the checkout's own AGENTS.md, and an exec command is its own agent.
    boolean builtin = agent.filter(CodingAgent.BUILTIN::equals).isPresent();
    // JGit blocks reading the branch, the environment file and AGENTS.md; the token (about 0.6 ms
    // of CPU, see JobTokens) is signed on that thread too.
    return vertx
        .executeBlocking(
            () -> preparation.prepare(repo, request.baseBranch(), builtin, revision), false)
        .compose(
            prepared -> {
              pending.put(
                  prepared.id(),
                  new Unrecorded(
                      prepared.token().token(),
                      prepared.instructions().text(),
                      prepared.cacheKeyFilesDigest()));
              JobCreated created =
                  prepared.createdEvent(
                      repo,
                      request,
                      model,
                      agent,
                      owner,
                      group,
                      revision == null ? null : revision.revision());
              return ledger
                  .record(created)
                  .compose(job -> revision == null ? Future.succeededFuture(job) : linked(job))
                  .onFailure(e -> pending.remove(prepared.id()));
            })
        .compose(job -> publish(connected, job));
  }

  /**
   * Queues the recorded job's request and records {@code job_dispatched}; a job whose request
   * cannot be queued ends {@code runner_error}.
   */
  private Future<Job> publish(JobQueue connected, Job job) {
    Unrecorded unrecorded = pending.remove(job.id());
    return connected
        .publish(
            JobRequests.of(
                job,
                cloneUrl.apply(RepoName.of(job.repo())),
                wallLimit,
                unrecorded.instructions(),
                unrecorded.cacheKeyFilesDigest(),
                clock.millis()),
            unrecorded.token(),
            context)
        .compose(sequence -> ledger.record(new JobDispatched(job.id(), sequence)))
        .recover(
            err ->
                ending
                    .endByGateway(
                        job.id(), "runner_error", "could not queue the job: " + err.getMessage())
                    .compose(
                        j ->
                            Future.failedFuture(
                                new RequestException.Unavailable(
                                    "could not queue the job: " + err.getMessage()))));
  }

  /**
   * Records on the revised job that {@code revision} now revises it ({@code job_revised}), so the
   * audit shows the link from both ends; the future carries the revision.
   */
  private Future<Job> linked(Job revision) {
    String revised = revision.revision().revises();
    return ledger
        .record(
            new JobRevised(revised, revision.repo(), revision.id(), revision.requesterTokenId()))
        .map(v -> ledger.get(revision.id()).orElseThrow());
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
}
