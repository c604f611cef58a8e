package ai.spboucher.spbgit.gateway.jobs;

import io.vertx.core.json.JsonObject;

/**
 * One event of the audit log of agent jobs (docs/protocol.md, "The audit log"): a record per event,
 * which knows its fields in the order the log writes them ({@link #toJson}, read back by {@link
 * AuditEventCodec}) and how it changes the job it is about ({@link #applyTo}). Each event is a
 * record of its own file; {@link AuditEventCodec} maps the names in the log to them.
 */
public sealed interface AuditEvent
    permits JobCreated,
        JobDispatched,
        JobStarted,
        RefsWritten,
        JobFinished,
        JobApproved,
        JobRejected,
        JobSuperseded,
        RefsDeleted,
        ReviewComment,
        JobRevised,
        JobRefused,
        OtherEvent {

  /** The event's name in the log, e.g. {@code job_created}: {@link AuditEventCodec} names each. */
  default String event() {
    return AuditEventCodec.nameOf(getClass());
  }

  /** The id of the job the event is about, or null for an event about none. */
  String job();

  /**
   * The event as the log stores it, without the {@code seq}, {@code ts} and {@code prev} it adds:
   * by default its record components in order ({@link EventFields#of}); an event whose entry is
   * shaped otherwise writes its own.
   */
  default JsonObject toJson() {
    return EventFields.of(this);
  }

  /**
   * The job as this event leaves it; {@code at} is the entry's {@code ts}. Events that would move a
   * job backwards (a late start after the end, a duplicate) leave it as it is, so replaying is
   * idempotent. Unchanged by default: the event is recorded for the owner's eyes.
   */
  default Job applyTo(Job job, String at) {
    return job;
  }
}
