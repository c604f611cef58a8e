package ai.spboucher.spbgit.gateway.jobs;

/**
 * The owner approved the job's proposal: {@code branch} was fast-forwarded to {@code sha} ({@code
 * result} says how the branch moved).
 */
record JobApproved(
    String job, String repo, String branch, String sha, String approver, String result)
    implements AuditEvent {

  @Override
  public Job applyTo(Job job, String at) {
    return job.with(b -> b.decided = Decision.approved(branch, sha, approver, at));
  }
}
