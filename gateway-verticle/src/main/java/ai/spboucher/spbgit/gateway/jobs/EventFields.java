package ai.spboucher.spbgit.gateway.jobs;

import io.vertx.core.json.JsonObject;

/** What the {@link AuditEvent} records share when they write an entry or apply it to a job. */
final class EventFields {

  private EventFields() {}

  /** The first fields of every entry: {@code event} and {@code job}. */
  static JsonObject head(AuditEvent event) {
    return new JsonObject().put("event", event.event()).put("job", event.job());
  }

  /** {@code value}, or {@code fallback} when a runner left it null or empty. */
  static String nonEmpty(String value, String fallback) {
    return value == null || value.isEmpty() ? fallback : value;
  }
}
