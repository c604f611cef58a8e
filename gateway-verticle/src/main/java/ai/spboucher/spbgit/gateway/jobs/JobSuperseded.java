package ai.spboucher.spbgit.gateway.jobs;

/** Another attempt of the job's group, {@code supersededBy}, was approved. */
record JobSuperseded(String job, String repo, String group, String supersededBy, String approver)
    implements AuditEvent {

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
