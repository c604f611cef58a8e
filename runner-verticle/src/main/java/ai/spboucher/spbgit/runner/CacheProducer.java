package ai.spboucher.spbgit.runner;

import io.vertx.core.json.DecodeException;
import io.vertx.core.json.JsonObject;
import java.nio.charset.StandardCharsets;
import java.util.Objects;

/**
 * Who produced a setup cache: the job whose setup phase wrote it and the commit that setup ran on.
 * Kept with the cache ({@link CacheArchive#PRODUCER_ENTRY}, the tar's first entry) and handed back
 * with it on a hit, so the runner can tell which code a restored cache came from.
 *
 * @param jobId the producing job's id; empty when unknown (a cache an older runner kept)
 * @param commit the commit its setup ran on; empty when unknown
 */
record CacheProducer(String jobId, String commit) {

  /** The producer of a cache kept without a record of it (by a runner before this one). */
  static final CacheProducer UNKNOWN = new CacheProducer("", "");

  CacheProducer {
    Objects.requireNonNull(jobId, "jobId");
    Objects.requireNonNull(commit, "commit");
  }

  /** The record as stored: {@code {"job_id": ..., "commit": ...}} in UTF-8. */
  byte[] toJson() {
    return new JsonObject()
        .put("job_id", jobId)
        .put("commit", commit)
        .encode()
        .getBytes(StandardCharsets.UTF_8);
  }

  /** Reads {@link #toJson}; {@link #UNKNOWN} for anything else. */
  static CacheProducer fromJson(byte[] json) {
    try {
      JsonObject o = new JsonObject(new String(json, StandardCharsets.UTF_8));
      Object jobId = o.getValue("job_id");
      Object commit = o.getValue("commit");
      if (jobId instanceof String j && commit instanceof String c) {
        return new CacheProducer(j, c);
      }
    } catch (DecodeException e) {
      // Not a record this runner wrote: as good as none.
    }
    return UNKNOWN;
  }
}
