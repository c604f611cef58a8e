package ai.spboucher.spbgit.gateway.jobs;

import io.vertx.core.json.JsonObject;

/** The owner rejected the job's work. */
record JobRejected(String job, String repo, String approver) implements AuditEvent {

  public static final String EVENT = "job_rejected";

  @Override
  public String event() {
    return EVENT;
  }

  @Override
  public JsonObject toJson() {
    return EventFields.head(this).put("repo", repo).put("approver", approver);
  }

  static JobRejected from(JsonObject e) {
    return new JobRejected(e.getString("job"), e.getString("repo"), e.getString("approver"));
  }

  @Override
  public Job applyTo(Job job, String at) {
    return job.with(b -> b.decided = Decision.rejected(approver, at));
  }
}
