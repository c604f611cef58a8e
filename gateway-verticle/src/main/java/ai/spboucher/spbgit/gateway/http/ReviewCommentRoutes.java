package ai.spboucher.spbgit.gateway.http;

import ai.spboucher.spbgit.gateway.errors.RequestException;
import ai.spboucher.spbgit.gateway.jobs.Job;
import ai.spboucher.spbgit.gateway.review.NewComment;
import ai.spboucher.spbgit.gateway.review.ReviewComments;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import java.util.function.Function;

/**
 * A job's review comments: {@code GET} lists them, {@code POST} adds one. Owner only, as every job
 * route (a signed-in page sends its CSRF token, checked before any route runs).
 */
final class ReviewCommentRoutes {

  private final ApiContract contract;
  private final ReviewComments comments;
  private final Function<RoutingContext, Job> jobOf;

  ReviewCommentRoutes(
      ApiContract contract, ReviewComments comments, Function<RoutingContext, Job> jobOf) {
    this.contract = contract;
    this.comments = comments;
    this.jobOf = jobOf;
  }

  void mount(Router router, String jobPath) {
    contract.validated(router.get(jobPath + "/comments"), "listJobComments").handler(this::list);
    contract.validated(router.post(jobPath + "/comments"), "addJobComment").handler(this::add);
  }

  private void list(RoutingContext ctx) {
    ApiRoutes.requireOwner(ctx);
    comments
        .list(jobOf.apply(ctx))
        .onSuccess(list -> Responses.json(ctx, 200, new JsonArray(list)))
        .onFailure(ctx::fail);
  }

  private void add(RoutingContext ctx) {
    var owner = ApiRoutes.requireOwner(ctx);
    Job job = jobOf.apply(ctx);
    comments
        .add(job, newComment(Responses.jsonBody(ctx)), owner)
        .onSuccess(comment -> Responses.json(ctx, 201, comment))
        .onFailure(ctx::fail);
  }

  /**
   * The body's shape; the text's size and whether the place is in the diff are the comments' to
   * check.
   */
  private static NewComment newComment(JsonObject body) {
    Object value = body.getValue("body");
    if (!(value instanceof String text)) {
      throw new RequestException.Invalid("'body' is required and must be a non-empty string");
    }
    Object line = body.getValue("line");
    if (line != null && !(line instanceof Integer)) {
      throw new RequestException.Invalid("'line' must be a line number");
    }
    return new NewComment(
        text,
        nullIfAbsent(Responses.optionalString(body, "path", NewComment.MAX_PATH_LENGTH)),
        nullIfAbsent(Responses.optionalString(body, "side", 3)),
        (Integer) line,
        nullIfAbsent(Responses.optionalString(body, "commit", 40)));
  }

  private static String nullIfAbsent(String value) {
    return value.isEmpty() ? null : value;
  }
}
