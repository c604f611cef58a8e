package ai.spboucher.spbgit.gateway.http;

import ai.spboucher.spbgit.gateway.errors.RequestException;
import ai.spboucher.spbgit.gateway.jobs.Job;
import ai.spboucher.spbgit.gateway.jobs.JobService;
import ai.spboucher.spbgit.gateway.jobs.JobViews;
import ai.spboucher.spbgit.gateway.jobs.NewJob;
import ai.spboucher.spbgit.gateway.jobs.NewRevision;
import ai.spboucher.spbgit.gateway.jobs.Proposals;
import ai.spboucher.spbgit.gateway.jobs.WorkRef;
import ai.spboucher.spbgit.gateway.jobs.WorkShas;
import ai.spboucher.spbgit.gateway.nats.JobLogs;
import ai.spboucher.spbgit.gateway.repos.RepoName;
import ai.spboucher.spbgit.gateway.repos.RepositoryStore;
import ai.spboucher.spbgit.gateway.review.DiffScope;
import ai.spboucher.spbgit.gateway.review.DiffStat;
import ai.spboucher.spbgit.gateway.review.ProposalDiffs;
import ai.spboucher.spbgit.gateway.review.ReviewComments;
import ai.spboucher.spbgit.proto.Subjects;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;
import java.util.stream.Collectors;

/**
 * Agent jobs under {@code /api/v1}: start, list, show, cancel, review (diff, log) and decide
 * (approve, reject, delete refs, comment: {@link ReviewCommentRoutes}), and read the audit log.
 * Owner only (PAT or signed-in session with CSRF token); job tokens are refused like on every other
 * API route.
 */
public final class JobRoutes {

  private static final System.Logger LOG = System.getLogger(JobRoutes.class.getName());

  private final Vertx vertx;
  private final JobService jobs;
  private final JobViews views;
  private final ProposalDiffs diffs;
  private final RepositoryStore repos;
  private final Supplier<JobLogs> logs;
  private final ApiContract contract;
  private final ReviewCommentRoutes comments;

  public JobRoutes(
      Vertx vertx,
      ApiContract contract,
      JobService jobs,
      JobViews views,
      ProposalDiffs diffs,
      RepositoryStore repos,
      Supplier<JobLogs> logs) {
    this.vertx = vertx;
    this.contract = contract;
    this.jobs = jobs;
    this.views = views;
    this.diffs = diffs;
    this.repos = repos;
    this.logs = logs;
    this.comments =
        new ReviewCommentRoutes(
            contract, new ReviewComments(vertx, jobs, new Proposals(repos), diffs), this::jobOf);
  }

  /** Mount after {@link ApiRoutes}' body and authentication handlers, before its fallback. */
  public void mount(Router router) {
    String jobs = "/api/v1/repos/:name/agent-jobs";
    String job = jobs + "/:id";
    contract.validated(router.get("/api/v1/jobs"), "listAllJobs").handler(this::listAll);
    contract.validated(router.post(jobs), "createJob").handler(this::create);
    contract.validated(router.get(jobs), "listJobs").handler(this::list);
    contract.validated(router.get(job), "getJob").handler(this::show);
    contract.validated(router.post(job + "/cancel"), "cancelJob").handler(this::cancel);
    contract.validated(router.post(job + "/revise"), "reviseJob").handler(this::revise);
    contract.validated(router.get(job + "/diff"), "getJobDiff").handler(this::diff);
    contract.validated(router.get(job + "/log"), "getJobLog").handler(this::log);
    contract.validated(router.get(job + "/egress"), "listJobEgress").handler(this::egress);
    contract
        .validated(router.get(job + "/model-calls"), "listJobModelCalls")
        .handler(this::modelCalls);
    contract.validated(router.post(job + "/approve"), "approveJob").handler(this::approve);
    contract.validated(router.post(job + "/reject"), "rejectJob").handler(this::reject);
    contract.validated(router.delete(job + "/refs"), "deleteJobRefs").handler(this::deleteRefs);
    contract
        .validated(router.get("/api/v1/repos/:name/agent-groups/:gid"), "getJobGroup")
        .handler(this::group);
    comments.mount(router, job);
    contract
        .validated(router.get("/api/v1/agent-jobs"), "listAuditEntries")
        .handler(this::auditLog);
  }

  private void listAll(RoutingContext ctx) {
    ApiRoutes.requireOwner(ctx);
    views
        .acrossRepos(jobs.list(null))
        .onSuccess(list -> Responses.json(ctx, 200, new JsonArray(list)))
        .onFailure(ctx::fail);
  }

  private void create(RoutingContext ctx) {
    var owner = ApiRoutes.requireOwner(ctx);
    RepoName repo = RepoName.of(ctx.pathParam("name"));
    JsonObject body = Responses.jsonBody(ctx);
    int attempts = attemptsOf(body);
    NewJob request = newJob(body);
    if (attempts == 1) {
      jobs.create(repo, request, owner)
          // A job this new has pushed nothing yet: no repository read for its proposal.
          .map(job -> job.toJson(WorkShas.NONE))
          .onSuccess(job -> Responses.json(ctx, 201, job))
          .onFailure(ctx::fail);
      return;
    }
    jobs.createGroup(repo, request, owner, attempts)
        .map(
            group ->
                new JsonObject()
                    .put("group", group.getKey())
                    .put("jobs", new JsonArray(group.getValue().stream().map(Job::id).toList())))
        .onSuccess(group -> Responses.json(ctx, 201, group))
        .onFailure(ctx::fail);
  }

  /** Best-of-N: how many sibling jobs to start, 1 (a lone job, today's answer) when left out. */
  private static int attemptsOf(JsonObject body) {
    Object value = body.getValue("attempts");
    if (value == null) {
      return 1;
    }
    if (!(value instanceof Integer attempts)
        || attempts < 1
        || attempts > JobService.MAX_ATTEMPTS) {
      throw new RequestException.Invalid(
          "'attempts' must be an integer from 1 to " + JobService.MAX_ATTEMPTS);
    }
    return attempts;
  }

  /**
   * The attempts of a best-of-N group side by side: how each ended, its tests, the size of its
   * change, spend and duration, and where to review its proposal. A client that goes away stops the
   * diffs behind the sizes, as it does the diff view's.
   */
  private void group(RoutingContext ctx) {
    ApiRoutes.requireOwner(ctx);
    RepoName repo = RepoName.of(ctx.pathParam("name"));
    String group = ctx.pathParam("gid");
    List<Job> attempts =
        jobs.group(group).stream().filter(j -> j.repo().equals(repo.value())).toList();
    if (attempts.isEmpty()) {
      throw new RequestException.NotFound("no group " + group + " in " + repo);
    }
    Promise<Void> clientGone = Promise.promise();
    ctx.response().closeHandler(closed -> clientGone.tryComplete());
    views
        .of(repo, attempts)
        .compose(
            list ->
                diffStatsOf(attempts, list, clientGone.future())
                    .map(
                        stats ->
                            new JsonObject()
                                .put("group", group)
                                .put("repo", repo.value())
                                .put("task", attempts.get(0).task())
                                .put("jobs", attemptsOf(repo, list, stats))))
        .onSuccess(json -> Responses.json(ctx, 200, json))
        .onFailure(
            e -> {
              if (!ctx.response().closed()) {
                ctx.fail(e);
              }
            });
  }

  /**
   * Each attempt's {@link DiffStat} as JSON, in the order of {@code attempts}: of its proposal, or
   * failing that of its partial work; null for one that pushed neither or whose diff failed.
   */
  private Future<List<JsonObject>> diffStatsOf(
      List<Job> attempts, List<JsonObject> views, Future<Void> clientGone) {
    List<Future<JsonObject>> stats = new ArrayList<>();
    for (int i = 0; i < attempts.size(); i++) {
      JsonObject view = views.get(i);
      WorkRef work =
          view.getString("proposal_sha") != null
              ? WorkRef.PROPOSAL
              : view.getString("partial_sha") != null ? WorkRef.PARTIAL : null;
      stats.add(
          work == null ? Future.succeededFuture() : diffStatOf(attempts.get(i), work, clientGone));
    }
    return Future.all(stats).map(all -> all.<JsonObject>list());
  }

  /**
   * One attempt's diff stat; null when its diff fails (too large, refs deleted meanwhile): one
   * attempt's diff must not cost the owner the comparison of the others.
   */
  private Future<JsonObject> diffStatOf(Job attempt, WorkRef work, Future<Void> clientGone) {
    return diffs
        .diff(attempt, work, clientGone)
        // A diff's JSON can run to megabytes: parse it on a worker, as it was computed.
        .compose(
            diff ->
                vertx.executeBlocking(
                    () -> DiffStat.of(new JsonObject(diff)).map(DiffStat::toJson).orElse(null),
                    false))
        .recover(
            e -> {
              LOG.log(
                  System.Logger.Level.INFO,
                  "no diff stat for job " + attempt.id() + "'s " + work.noun() + ": " + e);
              return Future.succeededFuture();
            });
  }

  private static JsonArray attemptsOf(
      RepoName repo, List<JsonObject> views, List<JsonObject> diffStats) {
    JsonArray attempts = new JsonArray();
    for (int i = 0; i < views.size(); i++) {
      attempts.add(attemptOf(repo, views.get(i)).put("diff_stat", diffStats.get(i)));
    }
    return attempts;
  }

  private static JsonObject attemptOf(RepoName repo, JsonObject job) {
    JsonObject spend = job.getJsonObject("spend");
    return new JsonObject()
        .put("id", job.getString("id"))
        .put("status", job.getString("status"))
        .put("exit_reason", job.getString("exit_reason"))
        .put("test_result", job.getString("test_result"))
        .put("input_tokens", spend == null ? null : spend.getLong("input_tokens"))
        .put("output_tokens", spend == null ? null : spend.getLong("output_tokens"))
        .put(
            "duration_seconds",
            secondsBetween(job.getString("started_at"), job.getString("finished_at")))
        .put("proposal_sha", job.getString("proposal_sha"))
        .put("decision", job.getJsonObject("decision"))
        .put("proposal_page", "/repos/" + repo.value() + "/agent-jobs/" + job.getString("id"));
  }

  /** Whole seconds from start to end, or null until both are known. */
  private static Long secondsBetween(String start, String end) {
    return start == null || end == null
        ? null
        : Duration.between(Instant.parse(start), Instant.parse(end)).toSeconds();
  }

  /**
   * The body's shape; what the gateway allows (models, agents, base branch) is the job service's to
   * check.
   */
  private static NewJob newJob(JsonObject body) {
    return new NewJob(
        Responses.requiredString(body, "task", NewJob.MAX_TASK_LENGTH),
        Responses.optionalString(body, "exec", NewJob.MAX_COMMAND_LENGTH),
        Responses.optionalString(body, "model", NewJob.MAX_NAME_LENGTH),
        Responses.optionalString(body, "test_command", NewJob.MAX_COMMAND_LENGTH),
        Responses.optionalString(body, "base", NewJob.MAX_NAME_LENGTH),
        Responses.optionalString(body, "agent", NewJob.MAX_NAME_LENGTH));
  }

  private void list(RoutingContext ctx) {
    ApiRoutes.requireOwner(ctx);
    RepoName repo = RepoName.of(ctx.pathParam("name"));
    vertx
        .executeBlocking(() -> repos.pathOf(repo).toFile().isDirectory(), false)
        .compose(
            exists ->
                exists
                    ? views.of(repo, jobs.list(repo.value()))
                    : Future.failedFuture(repo.notFound()))
        .onSuccess(list -> Responses.json(ctx, 200, new JsonArray(list)))
        .onFailure(ctx::fail);
  }

  /**
   * One job; one in a chain of revisions also lists the whole chain ({@code revisions}: each
   * revision's number, id, status, work and decision), first job first.
   */
  private void show(RoutingContext ctx) {
    ApiRoutes.requireOwner(ctx);
    Job job = jobOf(ctx);
    List<Job> chain = jobs.revisions(job);
    views
        .of(RepoName.of(job.repo()), chain)
        .map(
            list -> {
              JsonObject shown =
                  list.stream()
                      .filter(j -> j.getString("id").equals(job.id()))
                      .findFirst()
                      .orElseThrow();
              return chain.size() == 1
                  ? shown
                  : shown.put(
                      "revisions",
                      new JsonArray(list.stream().map(JobRoutes::revisionOf).toList()));
            })
        .onSuccess(json -> Responses.json(ctx, 200, json))
        .onFailure(ctx::fail);
  }

  private static JsonObject revisionOf(JsonObject job) {
    return new JsonObject()
        .put("revision", job.getInteger("revision"))
        .put("id", job.getString("id"))
        .put("status", job.getString("status"))
        .put("exit_reason", job.getString("exit_reason"))
        .put("proposal_sha", job.getString("proposal_sha"))
        .put("partial_sha", job.getString("partial_sha"))
        .put("base_sha", job.getString("base_sha"))
        .put("review", job.getJsonObject("review"))
        .put("decision", job.getJsonObject("decision"));
  }

  /**
   * Starts a revision of a finished job's work with the owner's review; answers the new job, as
   * creating one does.
   */
  private void revise(RoutingContext ctx) {
    var owner = ApiRoutes.requireOwner(ctx);
    Job previous = jobOf(ctx);
    jobs.revise(previous, newRevision(Responses.jsonBody(ctx)), owner)
        .map(job -> job.toJson(WorkShas.NONE))
        .onSuccess(job -> Responses.json(ctx, 201, job))
        .onFailure(ctx::fail);
  }

  /** The body's shape; what may be revised, and how, is the job service's to check. */
  private static NewRevision newRevision(JsonObject body) {
    Object comments = body.getValue("comments");
    List<Long> ids = null;
    if (comments != null) {
      if (!(comments instanceof JsonArray array)
          || array.size() > ReviewComments.MAX_PER_JOB
          || !array.stream().allMatch(id -> id instanceof Integer || id instanceof Long)) {
        throw new RequestException.Invalid(
            "'comments' must be a list of at most "
                + ReviewComments.MAX_PER_JOB
                + " review comment ids of the job");
      }
      ids = array.stream().map(id -> ((Number) id).longValue()).toList();
    }
    return new NewRevision(
        Responses.optionalString(body, "task", NewJob.MAX_TASK_LENGTH),
        ids,
        Responses.optionalString(body, "exec", NewJob.MAX_COMMAND_LENGTH),
        Responses.optionalString(body, "test_command", NewJob.MAX_COMMAND_LENGTH));
  }

  private void cancel(RoutingContext ctx) {
    ApiRoutes.requireOwner(ctx);
    jobs.cancel(jobOf(ctx).id())
        .compose(views::of)
        .onSuccess(job -> Responses.json(ctx, 202, job))
        .onFailure(ctx::fail);
  }

  /**
   * The proposal's diff, or with {@code ?ref=partial} the diff of the partial work a stopped job
   * left. A client that goes away stops the computation (unless another client waits for the same
   * diff).
   */
  private void diff(RoutingContext ctx) {
    ApiRoutes.requireOwner(ctx);
    WorkRef which =
        WorkRef.named(ctx.request().getParam("ref"))
            .orElseThrow(
                () -> new RequestException.Invalid("'ref' must be 'proposal' or 'partial'"));
    DiffScope scope =
        DiffScope.named(ctx.request().getParam("scope"))
            .orElseThrow(
                () -> new RequestException.Invalid("'scope' must be 'cumulative' or 'revision'"));
    Promise<Void> clientGone = Promise.promise();
    ctx.response().closeHandler(closed -> clientGone.tryComplete());
    diffs
        .diff(jobOf(ctx), which, scope, clientGone.future())
        .onSuccess(diff -> Responses.json(ctx, 200, diff))
        .onFailure(
            e -> {
              if (!ctx.response().closed()) {
                ctx.fail(e);
              }
            });
  }

  private void log(RoutingContext ctx) {
    ApiRoutes.requireOwner(ctx);
    Job job = jobOf(ctx);
    JobLogs jobLogs = logs.get();
    if (jobLogs == null) {
      throw new RequestException.Unavailable("the job log store (NATS) is not reachable");
    }
    ctx.response()
        .setChunked(true)
        .putHeader("Content-Type", "text/plain; charset=utf-8")
        .putHeader("X-Content-Type-Options", "nosniff")
        .putHeader("Cache-Control", "no-store");
    // A retried publish that landed outside the stream's duplicate window is stored twice: show it
    // once.
    long[] lastSequence = {0};
    jobLogs
        .replay(
            job.id(),
            vertx.getOrCreateContext(),
            chunk -> {
              if (chunk.getSequence() > lastSequence[0]) {
                lastSequence[0] = chunk.getSequence();
                ctx.response().write(chunk.getLog().getData().toStringUtf8());
              }
            })
        .onSuccess(v -> ctx.response().end())
        .onFailure(ctx::fail);
  }

  /** Every attempt the job made to reach something outside its sandbox, allowed or refused. */
  private void egress(RoutingContext ctx) {
    ApiRoutes.requireOwner(ctx);
    Job job = jobOf(ctx);
    JsonArray attempts = new JsonArray();
    requireLogs()
        .replaySubject(
            Subjects.egressEvents(job.id()),
            vertx.getOrCreateContext(),
            event -> {
              var e = event.getEgress();
              attempts.add(
                  new JsonObject()
                      .put("seq", event.getSequence())
                      .put("method", e.getMethod())
                      .put("host", e.getHost())
                      .put("port", e.getPort())
                      .put("allowed", e.getAllowed())
                      .put("bytes_up", e.getBytesUp())
                      .put("bytes_down", e.getBytesDown())
                      .put("duration_ms", e.getDurationMs())
                      .put("failure", e.getFailure())
                      .put("started_epoch_ms", e.getStartedEpochMs())
                      .put("via", e.getVia())
                      .put("phase", e.getPhase().isEmpty() ? null : e.getPhase()));
            })
        .onSuccess(v -> Responses.json(ctx, 200, attempts))
        .onFailure(ctx::fail);
  }

  /**
   * The exact requests the job's agent sent to the model, with status and token usage, as the
   * runner saw them.
   */
  private void modelCalls(RoutingContext ctx) {
    ApiRoutes.requireOwner(ctx);
    Job job = jobOf(ctx);
    JsonArray calls = new JsonArray();
    requireLogs()
        .replaySubject(
            Subjects.modelEvents(job.id()),
            vertx.getOrCreateContext(),
            event -> {
              var c = event.getModelCall();
              calls.add(
                  new JsonObject()
                      .put("seq", event.getSequence())
                      .put("ts", event.getTimestampEpochMs())
                      .put("provider", c.getProvider())
                      .put("model", c.getModel())
                      .put("status", c.getStatus())
                      .put("input_tokens", c.getInputTokens())
                      .put("output_tokens", c.getOutputTokens())
                      .put("duration_ms", c.getDurationMs())
                      .put("error", c.getError())
                      .put("request", c.getRequest().toStringUtf8())
                      .put("truncated", c.getTruncated()));
            })
        .onSuccess(v -> Responses.json(ctx, 200, calls))
        .onFailure(ctx::fail);
  }

  private JobLogs requireLogs() {
    JobLogs jobLogs = logs.get();
    if (jobLogs == null) {
      throw new RequestException.Unavailable("the job event store (NATS) is not reachable");
    }
    return jobLogs;
  }

  private void approve(RoutingContext ctx) {
    var owner = ApiRoutes.requireOwner(ctx);
    JsonObject body = Responses.jsonBody(ctx);
    Job job = jobOf(ctx);
    String branch = Responses.requiredString(body, "branch");
    String sha = Responses.requiredString(body, "sha");
    jobs.approve(job, branch, sha, owner)
        .compose(views::of)
        .onSuccess(j -> Responses.json(ctx, 200, j))
        .onFailure(ctx::fail);
  }

  private void reject(RoutingContext ctx) {
    var owner = ApiRoutes.requireOwner(ctx);
    jobs.reject(jobOf(ctx), owner)
        .compose(views::of)
        .onSuccess(j -> Responses.json(ctx, 200, j))
        .onFailure(ctx::fail);
  }

  private void deleteRefs(RoutingContext ctx) {
    var owner = ApiRoutes.requireOwner(ctx);
    jobs.deleteRefs(jobOf(ctx), owner)
        .onSuccess(
            deleted ->
                Responses.json(ctx, 200, new JsonObject().put("deleted", new JsonArray(deleted))))
        .onFailure(ctx::fail);
  }

  private void auditLog(RoutingContext ctx) {
    ApiRoutes.requireOwner(ctx);
    String repo = ctx.request().getParam("repo");
    String job = ctx.request().getParam("job");
    if ("lines".equals(ctx.request().getParam("format"))) {
      // The stored lines themselves, so a verifier hashes the bytes the chain was built from.
      jobs.auditLines(repo, job)
          .map(lines -> lines.stream().map(line -> line + "\n").collect(Collectors.joining()))
          .onSuccess(
              body -> ctx.response().putHeader("Content-Type", "application/x-ndjson").end(body))
          .onFailure(ctx::fail);
      return;
    }
    jobs.auditEntries(repo, job)
        .onSuccess(entries -> Responses.json(ctx, 200, new JsonArray(entries)))
        .onFailure(ctx::fail);
  }

  private Job jobOf(RoutingContext ctx) {
    RepoName repo = RepoName.of(ctx.pathParam("name"));
    String id = ctx.pathParam("id");
    return jobs.get(id)
        .filter(j -> j.repo().equals(repo.value()))
        .orElseThrow(
            () -> new RequestException.NotFound("no job " + id + " in repository " + repo));
  }
}
