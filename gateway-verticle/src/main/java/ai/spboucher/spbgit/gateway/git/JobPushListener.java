package ai.spboucher.spbgit.gateway.git;

import io.vertx.core.json.JsonArray;

/** Told, on a git worker thread, which refs a job token just wrote (after they were updated). */
@FunctionalInterface
public interface JobPushListener {

  /**
   * @param tokenId the {@code jti} of the job token that pushed
   * @param refs objects with {@code ref}, {@code old} and {@code new}, at most {@link
   *     ai.spboucher.spbgit.hooks.PushGate#MAX_REFS_PER_JOB} (the gate admits no more per push)
   */
  void refsWritten(String jobId, String repo, String tokenId, JsonArray refs);
}
