package ai.spboucher.spbgit.proto;

/**
 * Every NATS subject, JetStream stream and consumer name used between the gateway and the runners, in one
 * place (documented in docs/protocol.md).
 */
public final class Subjects {

  /** Work-queue stream of {@link JobRequest}s: each message is delivered to exactly one runner. */
  public static final String JOBS_STREAM = "SPB_JOBS";
  /** Subject the gateway publishes job requests on, with {@code Nats-Msg-Id} set to the job id. */
  public static final String JOB_REQUESTS = "spb.jobs.request";
  /** Durable pull consumer shared by all runners. */
  public static final String RUNNERS_CONSUMER = "spb-runners";

  /** Stream of {@link JobEvent}s (status changes and log chunks), kept for replay. */
  public static final String EVENTS_STREAM = "SPB_EVENTS";
  /** Wildcard covering every job's events. */
  public static final String ALL_EVENTS = "spb.events.>";
  /** Durable consumer through which the gateway records events; none is lost while it is down. */
  public static final String GATEWAY_EVENTS_CONSUMER = "spb-gateway";

  /** Core NATS subject prefix for {@link CancelJob}; runners subscribe to {@code spb.cancel.>}. */
  public static final String CANCEL_PREFIX = "spb.cancel.";

  private Subjects() {
  }

  /** The subject of one job's events. Job ids are {@code [a-z0-9-]}, so they are always a single token. */
  public static String events(String jobId) {
    return "spb.events." + jobId;
  }

  public static String cancel(String jobId) {
    return CANCEL_PREFIX + jobId;
  }
}
