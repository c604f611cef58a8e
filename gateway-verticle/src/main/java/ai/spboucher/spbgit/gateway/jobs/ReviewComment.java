package ai.spboucher.spbgit.gateway.jobs;

import io.vertx.core.json.JsonObject;

/**
 * An owner's review comment on the job's work at {@code commit}; a summary comment has no {@code
 * path}, {@code side} or {@code line}. Its id is the entry's {@code seq}.
 */
public record ReviewComment(
    String job,
    String repo,
    String commit,
    String kind,
    String path,
    String side,
    Integer line,
    String body,
    String author)
    implements AuditEvent {

  /** The comment as the API lists it, logged as entry {@code seq} at {@code at}. */
  JsonObject listed(Long seq, String at) {
    return new JsonObject()
        .put("id", seq)
        .put("commit", commit)
        .put("kind", kind)
        .put("path", path)
        .put("side", side)
        .put("line", line)
        .put("body", body)
        .put("author", author)
        .put("at", at);
  }
}
