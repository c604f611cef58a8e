package ai.spboucher.spbgit.gateway.http;

import ai.spboucher.spbgit.gateway.jobs.Job;
import ai.spboucher.spbgit.gateway.jobs.JobDecisions;
import ai.spboucher.spbgit.gateway.jobs.JobRevisions;
import ai.spboucher.spbgit.gateway.jobs.JobViews;
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
record JobDecisionRoutes(
    JobDecisions decisions,
    JobRevisions revisions,
    JobViews views,
    Function<RoutingContext, Job> jobOf) {

  void cancel(RoutingContext ctx) {
    Responses.answer(ctx, 202, decisions.cancel(jobOf.apply(ctx).id()).compose(views::of));
  }

  /**
   * Starts a revision of a finished job's work with the owner's review; answers the new job, as
   * creating one does.
   */
  void revise(RoutingContext ctx) {
    var owner = ApiRoutes.requireOwner(ctx);
    Job previous = jobOf.apply(ctx);
    Responses.answer(
        ctx,
        201,
        revisions
            .revise(previous, newRevision(Responses.jsonBody(ctx)), owner)
            .map(job -> job.toJson(WorkShas.NONE)));
  }

  /** The body as the API's document admitted it ({@code NewRevision}). */
  private static NewRevision newRevision(JsonObject body) {
    JsonArray comments = body.getJsonArray("comments");
    List<Long> ids =
        comments == null ? null : comments.stream().map(id -> ((Number) id).longValue()).toList();
    return new NewRevision(
        Responses.string(body, "task"),
        ids,
        Responses.string(body, "exec"),
        Responses.string(body, "test_command"));
  }

  void approve(RoutingContext ctx) {
    var owner = ApiRoutes.requireOwner(ctx);
    JsonObject body = Responses.jsonBody(ctx);
    Job job = jobOf.apply(ctx);
    Responses.answer(
        ctx,
        200,
        decisions
            .approve(job, body.getString("branch"), body.getString("sha"), owner)
            .compose(views::of));
  }

  void reject(RoutingContext ctx) {
    var owner = ApiRoutes.requireOwner(ctx);
    Responses.answer(ctx, 200, decisions.reject(jobOf.apply(ctx), owner).compose(views::of));
  }

  void deleteRefs(RoutingContext ctx) {
    var owner = ApiRoutes.requireOwner(ctx);
    Responses.answer(
        ctx,
        200,
        decisions
            .deleteRefs(jobOf.apply(ctx), owner)
            .map(deleted -> new JsonObject().put("deleted", new JsonArray(deleted))));
  }
}
