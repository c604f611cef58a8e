package ai.spboucher.spbgit.gateway.http;

import ai.spboucher.spbgit.gateway.jobs.Job;
import ai.spboucher.spbgit.gateway.jobs.JobDecisions;
import ai.spboucher.spbgit.gateway.jobs.JobRevisions;
import ai.spboucher.spbgit.gateway.jobs.JobViews;
import ai.spboucher.spbgit.gateway.jobs.NewJob;
import ai.spboucher.spbgit.gateway.jobs.NewRevision;
import ai.spboucher.spbgit.gateway.jobs.WorkShas;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.RoutingContext;
import java.util.List;
import java.util.function.Function;

/**
 * The owner's verbs on one job: cancel, revise, approve, reject and delete its refs. Mounted by
 * {@link JobRoutes}; the request's shape was checked against the API's document before a handler
 * runs, and what may be decided is {@link JobDecisions}' and {@link JobRevisions}' to check.
 */
final class JobDecisionRoutes {

  private final JobDecisions decisions;
  private final JobRevisions revisions;
  private final JobViews views;
  private final Function<RoutingContext, Job> jobOf;

  JobDecisionRoutes(
      JobDecisions decisions,
      JobRevisions revisions,
      JobViews views,
      Function<RoutingContext, Job> jobOf) {
    this.decisions = decisions;
    this.revisions = revisions;
    this.views = views;
    this.jobOf = jobOf;
  }

  void cancel(RoutingContext ctx) {
    ApiRoutes.requireOwner(ctx);
    decisions
        .cancel(jobOf.apply(ctx).id())
        .compose(views::of)
        .onSuccess(job -> Responses.json(ctx, 202, job))
        .onFailure(ctx::fail);
  }

  /**
   * Starts a revision of a finished job's work with the owner's review; answers the new job, as
   * creating one does.
   */
  void revise(RoutingContext ctx) {
    var owner = ApiRoutes.requireOwner(ctx);
    Job previous = jobOf.apply(ctx);
    revisions
        .revise(previous, newRevision(Responses.jsonBody(ctx)), owner)
        .map(job -> job.toJson(WorkShas.NONE))
        .onSuccess(job -> Responses.json(ctx, 201, job))
        .onFailure(ctx::fail);
  }

  /** The body as the API's document admitted it ({@code NewRevision}). */
  private static NewRevision newRevision(JsonObject body) {
    JsonArray comments = body.getJsonArray("comments");
    List<Long> ids =
        comments == null ? null : comments.stream().map(id -> ((Number) id).longValue()).toList();
    return new NewRevision(
        Responses.optionalString(body, "task", NewJob.MAX_TASK_LENGTH),
        ids,
        Responses.optionalString(body, "exec", NewJob.MAX_COMMAND_LENGTH),
        Responses.optionalString(body, "test_command", NewJob.MAX_COMMAND_LENGTH));
  }

  void approve(RoutingContext ctx) {
    var owner = ApiRoutes.requireOwner(ctx);
    JsonObject body = Responses.jsonBody(ctx);
    Job job = jobOf.apply(ctx);
    String branch = Responses.requiredString(body, "branch");
    String sha = Responses.requiredString(body, "sha");
    decisions
        .approve(job, branch, sha, owner)
        .compose(views::of)
        .onSuccess(j -> Responses.json(ctx, 200, j))
        .onFailure(ctx::fail);
  }

  void reject(RoutingContext ctx) {
    var owner = ApiRoutes.requireOwner(ctx);
    decisions
        .reject(jobOf.apply(ctx), owner)
        .compose(views::of)
        .onSuccess(j -> Responses.json(ctx, 200, j))
        .onFailure(ctx::fail);
  }

  void deleteRefs(RoutingContext ctx) {
    var owner = ApiRoutes.requireOwner(ctx);
    decisions
        .deleteRefs(jobOf.apply(ctx), owner)
        .onSuccess(
            deleted ->
                Responses.json(ctx, 200, new JsonObject().put("deleted", new JsonArray(deleted))))
        .onFailure(ctx::fail);
  }
}
