package ai.spboucher.spbgit.gateway.jobs;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

/** The owner deleted the job's refs ({@code refs}: the names that went). */
record RefsDeleted(String job, String repo, JsonArray refs, String by) implements AuditEvent {

  public static final String EVENT = "refs_deleted";

  @Override
  public String event() {
    return EVENT;
  }

  @Override
  public JsonObject toJson() {
    return EventFields.head(this).put("repo", repo).put("refs", refs).put("by", by);
  }

  static RefsDeleted from(JsonObject e) {
    return new RefsDeleted(
        e.getString("job"), e.getString("repo"), e.getJsonArray("refs"), e.getString("by"));
  }
}
