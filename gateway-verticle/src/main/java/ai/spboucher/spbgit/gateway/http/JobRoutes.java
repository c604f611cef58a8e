package ai.spboucher.spbgit.gateway.http;

import ai.spboucher.spbgit.gateway.jobs.Job;
import ai.spboucher.spbgit.gateway.jobs.JobService;
import ai.spboucher.spbgit.gateway.repos.RepoName;
import ai.spboucher.spbgit.gateway.repos.RepositoryStore;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;

/**
 * Agent jobs under {@code /api/v1}: start, list, show and cancel a repository's jobs, and read the audit log.
 * Owner PAT only; job tokens are refused like on every other API route.
 */
public final class JobRoutes {

  private final Vertx vertx;
  private final JobService jobs;
  private final RepositoryStore repos;

  public JobRoutes(Vertx vertx, JobService jobs, RepositoryStore repos) {
    this.vertx = vertx;
    this.jobs = jobs;
    this.repos = repos;
  }

  /** Mount after {@link ApiRoutes}' body and authentication handlers, before its catch-all. */
  public void mount(Router router) {
    router.post("/api/v1/repos/:name/agent-jobs").handler(this::create);
    router.get("/api/v1/repos/:name/agent-jobs").handler(this::list);
    router.get("/api/v1/repos/:name/agent-jobs/:id").handler(this::show);
    router.post("/api/v1/repos/:name/agent-jobs/:id/cancel").handler(this::cancel);
    router.get("/api/v1/agent-jobs").handler(this::auditLog);
  }

  private void create(RoutingContext ctx) {
    var owner = ApiRoutes.requireOwner(ctx);
    RepoName repo = RepoName.of(ctx.pathParam("name"));
    jobs.create(repo, Responses.jsonBody(ctx), owner)
        .onSuccess(job -> Responses.json(ctx, 201, job.toJson()))
        .onFailure(ctx::fail);
  }

  private void list(RoutingContext ctx) {
    ApiRoutes.requireOwner(ctx);
    RepoName repo = RepoName.of(ctx.pathParam("name"));
    vertx.executeBlocking(() -> repos.pathOf(repo).toFile().isDirectory())
        .onSuccess(exists -> {
          if (!exists) {
            ctx.fail(new NotFoundException("repository not found: " + repo));
            return;
          }
          Responses.json(ctx, 200, new JsonArray(jobs.list(repo.value()).stream().map(Job::toJson).toList()));
        })
        .onFailure(ctx::fail);
  }

  private void show(RoutingContext ctx) {
    ApiRoutes.requireOwner(ctx);
    Responses.json(ctx, 200, jobOf(ctx).toJson());
  }

  private void cancel(RoutingContext ctx) {
    ApiRoutes.requireOwner(ctx);
    jobs.cancel(jobOf(ctx).id())
        .onSuccess(job -> Responses.json(ctx, 202, job.toJson()))
        .onFailure(ctx::fail);
  }

  private void auditLog(RoutingContext ctx) {
    ApiRoutes.requireOwner(ctx);
    String repo = ctx.request().getParam("repo");
    String job = ctx.request().getParam("job");
    Responses.json(ctx, 200, new JsonArray(jobs.auditEntries(repo, job)));
  }

  private Job jobOf(RoutingContext ctx) {
    RepoName repo = RepoName.of(ctx.pathParam("name"));
    String id = ctx.pathParam("id");
    return jobs.get(id).filter(j -> j.repo().equals(repo.value()))
        .orElseThrow(() -> new NotFoundException("no job " + id + " in repository " + repo));
  }
}
