package ai.spboucher.spbgit.gateway.jobs;

import ai.spboucher.spbgit.gateway.environment.AgentEnvironment;
import ai.spboucher.spbgit.proto.Environment;
import ai.spboucher.spbgit.proto.JobRequest;
import ai.spboucher.spbgit.proto.Limits;
import ai.spboucher.spbgit.proto.Mode;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.time.Instant;
import java.util.List;

/** The wire request a recorded job is queued with: what the runner is told to run. */
final class JobRequests {

  private JobRequests() {}

  /**
   * @param cloneUrl where the runner clones the job's repository from
   * @param instructions the text of {@code AGENTS.md}: the log records only its blob id
   * @param cacheKeyFilesDigest the environment's cache key files at the base commit, hashed as the
   *     runner's cache key takes them ("" when unknown)
   */
  static JobRequest of(
      Job job,
      String cloneUrl,
      Duration wallLimit,
      String instructions,
      String cacheKeyFilesDigest,
      long createdEpochMs) {
    return JobRequest.newBuilder()
        .setJobId(job.id())
        .setRepo(job.repo())
        .setCloneUrl(cloneUrl)
        .setBaseRef(job.baseRef())
        .setTask(job.task())
        .setMode(job.isExec() ? Mode.MODE_EXEC : Mode.MODE_LLM)
        .setModel(job.model() == null ? "" : job.model())
        .setAgent(job.isExec() ? "" : job.agent())
        .setExecModel(job.execModel())
        .setExecCommand(job.execCommand() == null ? "" : job.execCommand())
        .setTestCommand(job.testCommand() == null ? "" : job.testCommand())
        .setLimits(Limits.newBuilder().setWallSeconds(wallLimit.toSeconds()))
        .setEnvironment(environmentOf(job).toBuilder().setCacheKeyFilesDigest(cacheKeyFilesDigest))
        .setBaseSha(job.baseSha() == null ? "" : job.baseSha())
        .setBaseWorkRef(job.revision() == null ? "" : job.revision().workRef())
        .setSetupSha(job.originalBaseSha() == null ? "" : job.originalBaseSha())
        .setInstructions(instructions)
        .setInstructionsBlob(job.instructionsBlob() == null ? "" : job.instructionsBlob())
        .setDeadlineEpochMs(Instant.parse(job.deadline()).toEpochMilli())
        .setCreatedEpochMs(createdEpochMs)
        .build();
  }

  /**
   * The wire form of the environment {@code job_created} recorded; the defaults for a job recorded
   * before them.
   */
  private static Environment environmentOf(Job job) {
    JsonObject recorded =
        job.environment() == null ? AgentEnvironment.NONE.toJson() : job.environment();
    return Environment.newBuilder()
        .setImage(recorded.getString("image", AgentEnvironment.DEFAULT_IMAGE))
        .setSetup(recorded.getString("setup", ""))
        .addAllSetupEgress(strings(recorded, "setup_egress"))
        .addAllEgress(strings(recorded, "egress"))
        .addAllCache(strings(recorded, "cache"))
        .addAllCacheKeyFiles(strings(recorded, "cache_key_files"))
        .setHash(recorded.getString("hash", ""))
        .build();
  }

  private static List<String> strings(JsonObject json, String key) {
    JsonArray array = json.getJsonArray(key, new JsonArray());
    return array.stream().map(String::valueOf).toList();
  }
}
