package ai.spboucher.spbgit.proto;

import java.util.regex.Pattern;

/**
 * Every NATS subject, JetStream stream and consumer name used between the gateway and the runners,
 * in one place (documented in docs/protocol.md).
 */
public final class Subjects {

  /** Work-queue stream of {@link JobRequest}s: each message is delivered to exactly one runner. */
  public static final String JOBS_STREAM = "SPB_JOBS";

  /**
   * Wildcard covering every image's job requests ({@link #jobRequests}): the work-queue stream's
   * subjects.
   */
  public static final String ALL_JOB_REQUESTS = "spb.jobs.request.*";

  /** The image of a job whose request names none ({@code Environment.image} empty). */
  public static final String DEFAULT_IMAGE = "base";

  /**
   * What an image name of the runners' catalogue may be: one subject token and part of a consumer
   * name, so no dot, wildcard or space.
   */
  public static final Pattern IMAGE_NAME = Pattern.compile("[a-z0-9][a-z0-9_-]{0,62}");

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

  /** Wildcard covering every refused job request ({@link RequestRefusal}). */
  public static final String ALL_REFUSALS = "spb.events.*.refused";

  /**
   * Durable consumer through which the gateway records runners' refusals of job requests (NATS 2.9
   * has no consumer with two filters: the status consumer cannot take them too).
   */
  public static final String GATEWAY_REFUSALS_CONSUMER = "spb-gateway-refusals";

  /** What a job id is; anything else a forged request may name is not put into a subject. */
  private static final Pattern JOB_ID = Pattern.compile("[a-z0-9][a-z0-9-]{0,63}");

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

  /**
   * The subject a runner reports its refusal of a job request on: {@code spb.events.<job>.refused},
   * or {@code spb.events._.refused} when {@code jobId} is not a job id (a forged request may name
   * anything).
   */
  public static String refusals(String jobId) {
    return "spb.events."
        + (jobId != null && JOB_ID.matcher(jobId).matches() ? jobId : "_")
        + ".refused";
  }

  /**
   * The subject the gateway publishes a job request for {@code image} on, with {@code Nats-Msg-Id}
   * set to the job id; an empty name is {@link #DEFAULT_IMAGE}. Only runners offering the image
   * pull from its consumer.
   */
  public static String jobRequests(String image) {
    return "spb.jobs.request." + imageName(image);
  }

  /** The subject of {@code request}'s image. */
  public static String jobRequests(JobRequest request) {
    return jobRequests(request.getEnvironment().getImage());
  }

  /**
   * The durable pull consumer of {@code image}'s requests, shared by every runner offering it. A
   * job whose image no runner offers stays in the stream, with no one pulling, until one does.
   */
  public static String runnersConsumer(String image) {
    return "spb-runners-" + imageName(image);
  }

  private static String imageName(String image) {
    String name = image == null || image.isEmpty() ? DEFAULT_IMAGE : image;
    if (!IMAGE_NAME.matcher(name).matches()) {
      throw new IllegalArgumentException(
          "image name must match " + IMAGE_NAME.pattern() + ", got " + name);
    }
    return name;
  }

  public static String cancel(String jobId) {
    return CANCEL_PREFIX + jobId;
  }
}
