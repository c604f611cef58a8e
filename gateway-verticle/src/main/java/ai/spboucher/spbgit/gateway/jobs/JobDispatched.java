package ai.spboucher.spbgit.gateway.jobs;

/** The queue stored the job's request as message {@code queueSeq}. */
record JobDispatched(String job, long queueSeq) implements AuditEvent {

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
