package ai.spboucher.spbgit.gateway.http;

import ai.spboucher.spbgit.gateway.errors.RequestException;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.DecodeException;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.RoutingContext;
import java.util.List;
import java.util.function.Function;

/** Small helpers for JSON requests and responses. */
final class Responses {

  private Responses() {}

  /** Answers {@code body}: a JSON object, array or list, or JSON encoded already (a cached one). */
  static void json(RoutingContext ctx, int status, Object body) {
    ctx.response()
        .setStatusCode(status)
        .putHeader("Content-Type", "application/json")
        .putHeader("Cache-Control", "no-store")
        .end(
            body instanceof String encoded
                ? encoded
                : body instanceof List<?> list
                    ? new JsonArray(list).encode()
                    : body instanceof JsonObject object
                        ? object.encode()
                        : ((JsonArray) body).encode());
  }

  /** Answers what {@code result} completes with, or fails the request with its failure. */
  static void answer(RoutingContext ctx, int status, Future<?> result) {
    result.onSuccess(body -> json(ctx, status, body)).onFailure(ctx::fail);
  }

  /**
   * Answers a long computation's result; {@code work} is given a future that completes when the
   * client goes away, to stop it, and a failure after that answers nobody.
   */
  static void answerWhileConnected(RoutingContext ctx, Function<Future<Void>, Future<?>> work) {
    Promise<Void> clientGone = Promise.promise();
    ctx.response().closeHandler(closed -> clientGone.tryComplete());
    work.apply(clientGone.future())
        .onSuccess(body -> json(ctx, 200, body))
        .onFailure(
            e -> {
              if (!ctx.response().closed()) {
                ctx.fail(e);
              }
            });
  }

  static void noContent(RoutingContext ctx) {
    ctx.response().setStatusCode(204).end();
  }

  /** The request body as a JSON object, or a 400 saying what is wrong with it. */
  static JsonObject jsonBody(RoutingContext ctx) {
    Buffer buffer = ctx.body() == null ? null : ctx.body().buffer();
    if (buffer == null || buffer.length() == 0) {
      throw new RequestException.Invalid("a JSON object body is required");
    }
    try {
      Object value = buffer.toJsonValue();
      if (value instanceof JsonObject object) {
        return object;
      }
    } catch (DecodeException e) {
      throw new RequestException.Invalid("request body is not valid JSON");
    }
    throw new RequestException.Invalid("request body must be a JSON object");
  }

  /** A field that must be a non-blank string, in a body no document checked (signing in). */
  static String requiredString(JsonObject body, String field) {
    if (!(body.getValue(field) instanceof String s) || s.isBlank()) {
      throw new RequestException.Invalid(
          "'" + field + "' is required and must be a non-empty string");
    }
    return s;
  }

  /**
   * A string field of a body the API's document admitted (which checked its type and length): empty
   * when absent or null.
   */
  static String string(JsonObject body, String field) {
    return body.getValue(field) instanceof String s ? s : "";
  }
}
