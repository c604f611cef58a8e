package ai.spboucher.spbgit.gateway.jobs;

import io.vertx.core.json.JsonObject;

/**
 * An event that changes no job, kept as it was read: one about the log itself ({@code
 * torn_line_set_aside}), or one this release does not know.
 */
record OtherEvent(JsonObject fields) implements AuditEvent {

  @Override
  public String event() {
    return fields.getString("event");
  }

  @Override
  public String job() {
    return fields.getValue("job") instanceof String id ? id : null;
  }

  @Override
  public JsonObject toJson() {
    return fields.copy();
  }
}
