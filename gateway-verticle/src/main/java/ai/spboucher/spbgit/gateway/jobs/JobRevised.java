package ai.spboucher.spbgit.gateway.jobs;

import io.vertx.core.json.JsonObject;

/** On the revised job: {@code revisedBy} now revises its work. */
record JobRevised(String job, String repo, String revisedBy, String requester)
    implements AuditEvent {

  public static final String EVENT = "job_revised";

  @Override
  public String event() {
    return EVENT;
  }

  @Override
  public JsonObject toJson() {
    return EventFields.head(this)
        .put("repo", repo)
        .put("revised_by", revisedBy)
        .put("requester", requester);
  }

  static JobRevised from(JsonObject e) {
    return new JobRevised(
        e.getString("job"),
        e.getString("repo"),
        e.getString("revised_by"),
        e.getString("requester"));
  }
}
