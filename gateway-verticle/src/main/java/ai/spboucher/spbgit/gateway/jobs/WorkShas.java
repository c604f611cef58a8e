package ai.spboucher.spbgit.gateway.jobs;

/** The commits a job's {@link WorkRef}s point at now; null where the job has no such ref. */
public record WorkShas(String proposal, String partial) {

  /** A job that has pushed neither. */
  public static final WorkShas NONE = new WorkShas(null, null);
}
