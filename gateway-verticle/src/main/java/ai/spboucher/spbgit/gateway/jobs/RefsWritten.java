package ai.spboucher.spbgit.gateway.jobs;

import ai.spboucher.spbgit.hooks.PushGate;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A job token pushed: {@code refs} is {@code [{ref, old, new}]} (with {@code token_id} in logs of
 * older releases).
 */
record RefsWritten(String job, String repo, String tokenId, JsonArray refs) implements AuditEvent {

  /** Refs listed per job: as many as a job may have at once. */
  static final int MAX_REFS_LISTED = PushGate.MAX_REFS_PER_JOB;

  @Override
  public JsonObject toJson() {
    return EventFields.head(this).put("repo", repo).put("token_id", tokenId).put("refs", refs);
  }

  static RefsWritten from(JsonObject e) {
    return new RefsWritten(
        e.getString("job"), e.getString("repo"), e.getString("token_id"), e.getJsonArray("refs"));
  }

  @Override
  public Job applyTo(Job job, String at) {
    return job.with(b -> b.refsWritten = latestPerRef(b.refsWritten, refs));
  }

  /**
   * The refs a job wrote, one entry per ref with its latest update, at most {@link
   * #MAX_REFS_LISTED}: the job JSON (and every list of jobs) stays small however often a job
   * pushed, also when replaying a log written before the push gate limited refs. The audit log
   * keeps every update.
   */
  private static List<JsonObject> latestPerRef(List<JsonObject> listed, JsonArray written) {
    Map<String, JsonObject> byRef = new LinkedHashMap<>();
    listed.forEach(r -> byRef.put(r.getString("ref"), r));
    if (written != null) {
      for (Object value : written) {
        if (value instanceof JsonObject r && r.getValue("ref") instanceof String ref) {
          // Re-inserted so the map's order is the order of the latest writes; token_id of older
          // logs is dropped.
          byRef.remove(ref);
          byRef.put(
              ref,
              new JsonObject()
                  .put("ref", ref)
                  .put("old", r.getString("old"))
                  .put("new", r.getString("new")));
        }
      }
    }
    List<JsonObject> latest = new ArrayList<>(byRef.values());
    return latest.size() <= MAX_REFS_LISTED
        ? latest
        : new ArrayList<>(latest.subList(latest.size() - MAX_REFS_LISTED, latest.size()));
  }
}
