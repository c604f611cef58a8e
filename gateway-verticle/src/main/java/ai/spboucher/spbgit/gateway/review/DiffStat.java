package ai.spboucher.spbgit.gateway.review;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.Optional;

/**
 * How big a job's change is, in the numbers a side-by-side comparison needs: files changed and
 * lines added and deleted, summed from its diff ({@link FileDiffs#diff}).
 *
 * @param truncated the diff was cut short (more files than it lists, a file too big to diff, or
 *     hunks past the line budget), so the counts may fall short of the whole change
 */
public record DiffStat(int files, long additions, long deletions, boolean truncated) {

  /**
   * The stat of a diff as {@link ProposalDiffs#diff} answers it; empty when the diff ran out of
   * time ({@code too_large}), since it then counted no line of any file.
   */
  public static Optional<DiffStat> of(JsonObject diff) {
    if (diff.getBoolean("too_large", false)) {
      return Optional.empty();
    }
    JsonArray files = diff.getJsonArray("files");
    long additions = 0;
    long deletions = 0;
    for (int i = 0; i < files.size(); i++) {
      additions += files.getJsonObject(i).getLong("additions");
      deletions += files.getJsonObject(i).getLong("deletions");
    }
    return Optional.of(
        new DiffStat(files.size(), additions, deletions, diff.getBoolean("truncated", false)));
  }

  /** The API form: {@code {files, additions, deletions, truncated}}. */
  public JsonObject toJson() {
    return new JsonObject()
        .put("files", files)
        .put("additions", additions)
        .put("deletions", deletions)
        .put("truncated", truncated);
  }
}
