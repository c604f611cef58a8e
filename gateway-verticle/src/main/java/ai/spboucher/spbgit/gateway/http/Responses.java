package ai.spboucher.spbgit.gateway.http;

import ai.spboucher.spbgit.gateway.errors.RequestException;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.DecodeException;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.RoutingContext;

/** Small helpers for JSON requests and responses. */
final class Responses {

  private Responses() {}

  static void json(RoutingContext ctx, int status, Object body) {
    ctx.response()
        .setStatusCode(status)
        .putHeader("Content-Type", "application/json")
        .putHeader("Cache-Control", "no-store")
        .end(body instanceof JsonObject o ? o.encode() : ((JsonArray) body).encode());
  }

  /** A JSON body encoded already (a cached one). */
  static void json(RoutingContext ctx, int status, String encoded) {
    ctx.response()
        .setStatusCode(status)
        .putHeader("Content-Type", "application/json")
        .putHeader("Cache-Control", "no-store")
        .end(encoded);
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

  static String requiredString(JsonObject body, String field) {
    Object value = body.getValue(field);
    if (!(value instanceof String s) || s.isBlank()) {
      throw new RequestException.Invalid(
          "'" + field + "' is required and must be a non-empty string");
    }
    return s;
  }

  /** Like {@link #optionalString}, refusing an empty or blank value as well. */
  static String requiredString(JsonObject body, String field, int maxLength) {
    String value = optionalString(body, field, maxLength);
    if (value.isBlank()) {
      throw new RequestException.Invalid(
          "'" + field + "' is required and must be a non-empty string");
    }
    return value;
  }

  static String optionalString(JsonObject body, String field, int maxLength) {
    Object value = body.getValue(field);
    if (value == null) {
      return "";
    }
    if (!(value instanceof String s)) {
      throw new RequestException.Invalid("'" + field + "' must be a string");
    }
    if (s.length() > maxLength) {
      throw new RequestException.Invalid(
          "'" + field + "' is longer than " + maxLength + " characters");
    }
    return s;
  }
}
