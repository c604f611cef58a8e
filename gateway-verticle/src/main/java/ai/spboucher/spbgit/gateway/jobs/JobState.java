package ai.spboucher.spbgit.gateway.jobs;

/**
 * Where a job is in its lifecycle on the gateway, as the audit log says (the API calls it its
 * status; {@code proto.JobStatus} is what a runner reports): each is entered by one event ({@code
 * job_created}, {@code job_dispatched}, {@code job_started}, {@code job_finished}) and a job never
 * goes back.
 */
public enum JobState {
  QUEUED("queued"),
  DISPATCHED("dispatched"),
  STARTED("started"),
  FINISHED("finished");

  private final String wire;

  JobState(String wire) {
    this.wire = wire;
  }

  /** The name the API and the metrics use. */
  public String wire() {
    return wire;
  }

  @Override
  public String toString() {
    return wire;
  }
}
