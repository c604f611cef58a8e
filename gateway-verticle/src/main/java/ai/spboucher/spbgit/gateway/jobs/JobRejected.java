package ai.spboucher.spbgit.gateway.jobs;

/** The owner rejected the job's work. */
record JobRejected(String job, String repo, String approver) implements AuditEvent {

  @Override
  public Job applyTo(Job job, String at) {
    return job.with(b -> b.decided = Decision.rejected(approver, at));
  }
}
