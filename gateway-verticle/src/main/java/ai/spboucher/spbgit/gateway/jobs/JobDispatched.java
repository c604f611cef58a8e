package ai.spboucher.spbgit.gateway.jobs;

import io.vertx.core.json.JsonObject;

/** The queue stored the job's request as message {@code queueSeq}. */
record JobDispatched(String job, long queueSeq) implements AuditEvent {

  public static final String EVENT = "job_dispatched";

  @Override
  public String event() {
    return EVENT;
  }

  @Override
  public JsonObject toJson() {
    return EventFields.head(this).put("queue_seq", queueSeq);
  }

  static JobDispatched from(JsonObject e) {
    Long sequence = e.getLong("queue_seq", 0L);
    return new JobDispatched(e.getString("job"), sequence == null ? 0 : sequence);
  }

  @Override
  public Job applyTo(Job job, String at) {
    return job.state() != JobState.QUEUED
        ? job
        : job.with(
            b -> {
              b.state = JobState.DISPATCHED;
              b.queueSequence = queueSeq;
            });
  }
}
