package ai.spboucher.spbgit.gateway.jobs;

import io.vertx.core.json.JsonObject;

/**
 * The owner approved the job's proposal: {@code branch} was fast-forwarded to {@code sha} ({@code
 * result} says how the branch moved).
 */
record JobApproved(
    String job, String repo, String branch, String sha, String approver, String result)
    implements AuditEvent {

  public static final String EVENT = "job_approved";

  @Override
  public String event() {
    return EVENT;
  }

  @Override
  public JsonObject toJson() {
    return EventFields.head(this)
        .put("repo", repo)
        .put("branch", branch)
        .put("sha", sha)
        .put("approver", approver)
        .put("result", result);
  }

  static JobApproved from(JsonObject e) {
    return new JobApproved(
        e.getString("job"),
        e.getString("repo"),
        e.getString("branch"),
        e.getString("sha"),
        e.getString("approver"),
        e.getString("result"));
  }

  @Override
  public Job applyTo(Job job, String at) {
    return job.with(b -> b.decided = Decision.approved(branch, sha, approver, at));
  }
}
