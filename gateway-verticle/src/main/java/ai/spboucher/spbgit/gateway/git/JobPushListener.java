package ai.spboucher.spbgit.gateway.git;

import io.vertx.core.json.JsonArray;

/** Told, on a git worker thread, which refs a job token just wrote (after they were updated). */
@FunctionalInterface
public interface JobPushListener {

  /** @param refs objects with {@code ref}, {@code old}, {@code new} and {@code token_id} */
  void refsWritten(String jobId, String repo, JsonArray refs);
}
