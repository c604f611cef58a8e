package ai.spboucher.spbgit.proto;

/**
 * Every NATS subject, JetStream stream and consumer name used between the gateway and the runners,
 * in one place (documented in docs/protocol.md).
 */
public final class Subjects {

  /** Work-queue stream of {@link JobRequest}s: each message is delivered to exactly one runner. */
  public static final String JOBS_STREAM = "SPB_JOBS";

  /** Subject the gateway publishes job requests on, with {@code Nats-Msg-Id} set to the job id. */
  public static final String JOB_REQUESTS = "spb.jobs.request";

  /** Durable pull consumer shared by all runners. */
  public static final String RUNNERS_CONSUMER = "spb-runners";

  /**
   * Stream of {@link JobEvent}s (status changes, log chunks, model calls, egress attempts), kept
   * for replay.
   */
  public static final String EVENTS_STREAM = "SPB_EVENTS";

  /** Wildcard covering every job's events. */
  public static final String ALL_EVENTS = "spb.events.>";

  /** Wildcard covering every job's status changes (not its log). */
  public static final String ALL_STATUS_EVENTS = "spb.events.*.status";

  /** Wildcard covering every job's log chunks ({@link LogChunk}). */
  public static final String ALL_LOG_EVENTS = "spb.events.*.log";

  /** Wildcard covering every job's model calls ({@link ModelCall}). */
  public static final String ALL_MODEL_EVENTS = "spb.events.*.model";

  /** Wildcard covering every job's egress attempts ({@link EgressAttempt}). */
  public static final String ALL_EGRESS_EVENTS = "spb.events.*.egress";

  /**
   * Durable consumer through which the gateway records status changes; none is lost while it is
   * down.
   */
  public static final String GATEWAY_EVENTS_CONSUMER = "spb-gateway";

  /** Core NATS subject prefix for {@link CancelJob}; runners subscribe to {@code spb.cancel.>}. */
  public static final String CANCEL_PREFIX = "spb.cancel.";

  private Subjects() {}

  /**
   * The subject of one job's status changes. Job ids are {@code [a-z0-9-]}: always a single subject
   * token.
   */
  public static String statusEvents(String jobId) {
    return "spb.events." + jobId + ".status";
  }

  /** The subject of one job's log chunks; their {@code sequence} runs 1, 2, 3... without gaps. */
  public static String logEvents(String jobId) {
    return "spb.events." + jobId + ".log";
  }

  /**
   * The subject of one job's model calls ({@link ModelCall}, llm jobs only), with its own gap-free
   * {@code sequence}.
   */
  public static String modelEvents(String jobId) {
    return "spb.events." + jobId + ".model";
  }

  /**
   * The subject of one job's egress attempts ({@link EgressAttempt}: through the proxy, allowed or
   * refused, and model calls forwarded to the provider), with its own gap-free {@code sequence}.
   */
  public static String egressEvents(String jobId) {
    return "spb.events." + jobId + ".egress";
  }

  public static String cancel(String jobId) {
    return CANCEL_PREFIX + jobId;
  }
}
