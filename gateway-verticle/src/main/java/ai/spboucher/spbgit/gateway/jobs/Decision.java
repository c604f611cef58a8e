package ai.spboucher.spbgit.gateway.jobs;

import io.vertx.core.json.JsonObject;

/**
 * The owner's decision on a finished job's work: approved onto {@code branch} at {@code sha},
 * rejected, or superseded because another attempt of its group ({@code supersededBy}) was approved.
 * The API shows {@code branch} and {@code sha} (null) for a rejection too, as it always has.
 *
 * @param by the token id of the owner who decided
 * @param at when, as the audit entry's {@code ts}
 */
public record Decision(
    Kind kind, String branch, String sha, String by, String at, String supersededBy) {

  /** The kinds of decision, with the names the API uses. */
  public enum Kind {
    APPROVED("approved"),
    REJECTED("rejected"),
    SUPERSEDED("superseded");

    private final String wire;

    Kind(String wire) {
      this.wire = wire;
    }

    public String wire() {
      return wire;
    }
  }

  static Decision approved(String branch, String sha, String by, String at) {
    return new Decision(Kind.APPROVED, branch, sha, by, at, null);
  }

  static Decision rejected(String by, String at) {
    return new Decision(Kind.REJECTED, null, null, by, at, null);
  }

  static Decision superseded(String supersededBy, String by, String at) {
    return new Decision(Kind.SUPERSEDED, null, null, by, at, supersededBy);
  }

  public boolean is(Kind which) {
    return kind == which;
  }

  /**
   * The API form: {@code {"decision": "approved"|"rejected", "branch", "sha", "by", "at"}}, or
   * {@code {"decision": "superseded", "superseded_by", "by", "at"}}.
   */
  public JsonObject toJson() {
    JsonObject json = new JsonObject().put("decision", kind.wire());
    if (kind == Kind.SUPERSEDED) {
      json.put("superseded_by", supersededBy);
    } else {
      json.put("branch", branch).put("sha", sha);
    }
    return json.put("by", by).put("at", at);
  }
}
