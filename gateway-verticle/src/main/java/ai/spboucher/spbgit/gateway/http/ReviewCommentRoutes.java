package ai.spboucher.spbgit.gateway.http;

import ai.spboucher.spbgit.gateway.jobs.Job;
import ai.spboucher.spbgit.gateway.review.NewComment;
import ai.spboucher.spbgit.gateway.review.ReviewComments;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import java.util.function.Function;

/**
 * A job's review comments: {@code GET} lists them, {@code POST} adds one. Owner only, as every job
 * route (a signed-in page sends its CSRF token, checked before any route runs).
 */
record ReviewCommentRoutes(
    ApiContract contract, ReviewComments comments, Function<RoutingContext, Job> jobOf) {

  void mount(Router router, String jobPath) {
    contract.validated(router.get(jobPath + "/comments"), "listJobComments").handler(this::list);
    contract.validated(router.post(jobPath + "/comments"), "addJobComment").handler(this::add);
  }

  private void list(RoutingContext ctx) {
    Responses.answer(ctx, 200, comments.list(jobOf.apply(ctx)));
  }

  private void add(RoutingContext ctx) {
    var owner = ApiRoutes.requireOwner(ctx);
    Job job = jobOf.apply(ctx);
    Responses.answer(ctx, 201, comments.add(job, newComment(Responses.jsonBody(ctx)), owner));
  }

  /**
   * The body as the API's document admitted it ({@code NewComment}); the text's size and whether
   * the place is in the diff are the comments' to check.
   */
  private static NewComment newComment(JsonObject body) {
    return new NewComment(
        body.getString("body"),
        // An empty path is no path: the summary comment.
        body.getString("path", "").isEmpty() ? null : body.getString("path"),
        body.getString("side"),
        body.getInteger("line"),
        body.getString("commit"));
  }
}
