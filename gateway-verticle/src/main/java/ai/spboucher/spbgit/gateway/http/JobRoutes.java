package ai.spboucher.spbgit.gateway.http;

import ai.spboucher.spbgit.gateway.jobs.Job;
import ai.spboucher.spbgit.gateway.jobs.JobCreation;
import ai.spboucher.spbgit.gateway.jobs.JobLifecycle;
import ai.spboucher.spbgit.gateway.jobs.JobViews;
import ai.spboucher.spbgit.gateway.jobs.NewJob;
import ai.spboucher.spbgit.gateway.jobs.WorkShas;
import ai.spboucher.spbgit.gateway.nats.JobLogs;
import ai.spboucher.spbgit.gateway.repos.RepoName;
import ai.spboucher.spbgit.gateway.repos.RepositoryStore;
import ai.spboucher.spbgit.gateway.review.ProposalDiffs;
import ai.spboucher.spbgit.gateway.review.ReviewComments;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import java.util.List;
import java.util.function.Supplier;
import java.util.stream.Collectors;

/**
 * Agent jobs under {@code /api/v1}: start, list and show them here; review what they produced
 * ({@link JobOutputRoutes}), compare a group's attempts ({@link JobGroupRoutes}), decide ({@link
 * JobDecisionRoutes}), comment ({@link ReviewCommentRoutes}), and read the audit log. Owner only
 * (PAT or signed-in session with CSRF token); job tokens are refused like on every other API route.
 * Every request's shape is checked against the API's document before its handler runs.
 */
public record JobRoutes(
    Vertx vertx,
    ApiContract contract,
    JobLifecycle jobs,
    JobViews views,
    ProposalDiffs diffs,
    ReviewComments comments,
    RepositoryStore repos,
    Supplier<JobLogs> logs) {

  /** Mount after {@link ApiRoutes}' body and authentication handlers, before its fallback. */
  public void mount(Router router) {
    var outputs = new JobOutputRoutes(vertx, diffs, logs, this::jobOf);
    var groups = new JobGroupRoutes(vertx, jobs.ledger(), views, diffs);
    var decisions = new JobDecisionRoutes(jobs.decisions(), jobs.revisions(), views, this::jobOf);
    String repoJobs = "/api/v1/repos/:name/agent-jobs";
    String job = repoJobs + "/:id";
    contract.validated(router.get("/api/v1/jobs"), "listAllJobs").handler(this::listAll);
    contract.validated(router.post(repoJobs), "createJob").handler(this::create);
    contract.validated(router.get(repoJobs), "listJobs").handler(this::list);
    contract.validated(router.get(job), "getJob").handler(this::show);
    contract.validated(router.post(job + "/cancel"), "cancelJob").handler(decisions::cancel);
    contract.validated(router.post(job + "/revise"), "reviseJob").handler(decisions::revise);
    contract.validated(router.get(job + "/diff"), "getJobDiff").handler(outputs::diff);
    contract.validated(router.get(job + "/log"), "getJobLog").handler(outputs::log);
    contract.validated(router.get(job + "/egress"), "listJobEgress").handler(outputs::egress);
    contract
        .validated(router.get(job + "/model-calls"), "listJobModelCalls")
        .handler(outputs::modelCalls);
    contract.validated(router.post(job + "/approve"), "approveJob").handler(decisions::approve);
    contract.validated(router.post(job + "/reject"), "rejectJob").handler(decisions::reject);
    contract
        .validated(router.delete(job + "/refs"), "deleteJobRefs")
        .handler(decisions::deleteRefs);
    contract
        .validated(router.get("/api/v1/repos/:name/agent-groups/:gid"), "getJobGroup")
        .handler(groups::group);
    new ReviewCommentRoutes(contract, comments, this::jobOf).mount(router, job);
    contract
        .validated(router.get("/api/v1/agent-jobs"), "listAuditEntries")
        .handler(this::auditLog);
  }

  private void listAll(RoutingContext ctx) {
    Responses.answer(ctx, 200, views.acrossRepos(jobs.ledger().list(null)));
  }

  /** One job, or with {@code attempts} of 2 or more a best-of-N group of them. */
  private void create(RoutingContext ctx) {
    var owner = ApiRoutes.requireOwner(ctx);
    RepoName repo = RepoName.of(ctx.pathParam("name"));
    JsonObject body = Responses.jsonBody(ctx);
    int attempts = body.getInteger("attempts", 1);
    NewJob request = newJob(body);
    Responses.answer(
        ctx,
        201,
        attempts == 1
            // A job this new has pushed nothing yet: no repository read for its proposal.
            ? jobs.creation().create(repo, request, owner).map(job -> job.toJson(WorkShas.NONE))
            : jobs.creation()
                .createGroup(repo, request, owner, attempts)
                .map(
                    group ->
                        new JsonObject()
                            .put("group", group.getKey())
                            .put(
                                "jobs",
                                new JsonArray(group.getValue().stream().map(Job::id).toList()))));
  }

  /**
   * The body as the API's document admitted it; what the gateway allows (models, agents, base
   * branch) is {@link JobCreation}'s to check.
   */
  private static NewJob newJob(JsonObject body) {
    return new NewJob(
        Responses.string(body, "task"),
        Responses.string(body, "exec"),
        Responses.string(body, "model"),
        Responses.string(body, "test_command"),
        Responses.string(body, "base"),
        Responses.string(body, "agent"));
  }

  private void list(RoutingContext ctx) {
    RepoName repo = RepoName.of(ctx.pathParam("name"));
    Responses.answer(
        ctx,
        200,
        vertx
            .executeBlocking(() -> repos.pathOf(repo).toFile().isDirectory(), false)
            .compose(
                exists ->
                    exists
                        ? views.of(repo, jobs.ledger().list(repo.value()))
                        : Future.failedFuture(repo.notFound())));
  }

  /**
   * One job; one in a chain of revisions also lists the whole chain ({@code revisions}: each
   * revision's number, id, status, work and decision), first job first.
   */
  private void show(RoutingContext ctx) {
    Job job = jobOf(ctx);
    List<Job> chain = jobs.ledger().revisions(job);
    Responses.answer(
        ctx,
        200,
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
                }));
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

  private void auditLog(RoutingContext ctx) {
    String repo = ctx.request().getParam("repo");
    String job = ctx.request().getParam("job");
    if ("lines".equals(ctx.request().getParam("format"))) {
      // The stored lines themselves, so a verifier hashes the bytes the chain was built from.
      jobs.ledger()
          .auditLines(repo, job)
          .map(lines -> lines.stream().map(line -> line + "\n").collect(Collectors.joining()))
          .onSuccess(
              body -> ctx.response().putHeader("Content-Type", "application/x-ndjson").end(body))
          .onFailure(ctx::fail);
      return;
    }
    Responses.answer(ctx, 200, jobs.ledger().auditEntries(repo, job));
  }

  private Job jobOf(RoutingContext ctx) {
    return jobs.ledger().get(RepoName.of(ctx.pathParam("name")).value(), ctx.pathParam("id"));
  }
}
