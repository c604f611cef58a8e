package ai.spboucher.spbgit.gateway.jobs;

import ai.spboucher.spbgit.proto.CacheOutcome;
import ai.spboucher.spbgit.proto.StatusChange;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.List;

/**
 * The audit events of what a runner reported ({@link StatusChange}), and of the ends the gateway
 * decides itself: the wire's empty strings and zeros become the log's nulls and absent fields.
 */
final class RunnerReports {

  private RunnerReports() {}

  /** A runner's report that it started the job. */
  static JobStarted started(String jobId, StatusChange change) {
    return new JobStarted(
        jobId,
        change.getRunnerId(),
        change.getContainerId(),
        emptyToNull(change.getImageDigest()),
        cacheOutcome(change.getCache()),
        emptyToNull(change.getAgent()),
        emptyToNull(change.getAgentVersion()),
        emptyToNull(change.getCacheKey()),
        cacheProducer(change));
  }

  /** A runner's report that the job ended, with the model spend it metered and setup's facts. */
  static JobFinished finished(String jobId, StatusChange change) {
    return new JobFinished(
        jobId,
        change.getExitReason(),
        change.getRunnerId(),
        change.getContainerId(),
        change.getDetail(),
        emptyToNull(change.getCacheNote()),
        change.getSetupChangesCount() == 0
            ? null
            : new JsonArray(List.copyOf(change.getSetupChangesList())),
        spendOf(change));
  }

  /** An end the gateway decided (cancelled, runner_lost, runner_error): no runner reported it. */
  static JobFinished endedByGateway(String jobId, String reason, String detail) {
    return new JobFinished(jobId, reason, "", "", detail, null, null, null);
  }

  private static Spend spendOf(StatusChange change) {
    if (change.getProvider().isEmpty()
        && change.getInputTokens() == 0
        && change.getOutputTokens() == 0) {
      return null;
    }
    return new Spend(
        change.getProvider(), change.getModel(), change.getInputTokens(), change.getOutputTokens());
  }

  private static String emptyToNull(String value) {
    return value.isEmpty() ? null : value;
  }

  /** How the audit names a start's cache outcome; null from a runner older than environments. */
  private static String cacheOutcome(CacheOutcome outcome) {
    return switch (outcome) {
      case CACHE_HIT -> "hit";
      case CACHE_MISS -> "miss";
      case CACHE_NONE -> "none";
      default -> null;
    };
  }

  /** Who kept the cache entry a start restored: null without a hit, or from an older runner. */
  private static JsonObject cacheProducer(StatusChange change) {
    if (change.getCacheKey().isEmpty()) {
      return null;
    }
    return new JsonObject()
        .put("job", change.getCacheProducerJob())
        .put("commit", change.getCacheProducerCommit());
  }
}
