package ai.spboucher.spbgit.gateway.jobs;

import io.vertx.core.json.JsonObject;

/** Another attempt of the job's group, {@code supersededBy}, was approved. */
record JobSuperseded(String job, String repo, String group, String supersededBy, String approver)
    implements AuditEvent {

  public static final String EVENT = "job_superseded";

  @Override
  public String event() {
    return EVENT;
  }

  @Override
  public JsonObject toJson() {
    return EventFields.head(this)
        .put("repo", repo)
        .put("group", group)
        .put("superseded_by", supersededBy)
        .put("approver", approver);
  }

  static JobSuperseded from(JsonObject e) {
    return new JobSuperseded(
        e.getString("job"),
        e.getString("repo"),
        e.getString("group"),
        e.getString("superseded_by"),
        e.getString("approver"));
  }

  /**
   * Only an undecided attempt is superseded: the approval of a sibling never overrides the owner's
   * own decision on this one.
   */
  @Override
  public Job applyTo(Job job, String at) {
    return job.decided() != null
        ? job
        : job.with(b -> b.decided = Decision.superseded(supersededBy, approver, at));
  }
}
