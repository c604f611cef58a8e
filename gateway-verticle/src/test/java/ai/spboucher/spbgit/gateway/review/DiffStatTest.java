package ai.spboucher.spbgit.gateway.review;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class DiffStatTest {

  @Test
  void sumsTheLinesOfEveryFileAndKeepsTheDiffsTruncation() {
    JsonObject diff =
        diff(false, false, file("README.md", 3, 1), file("NOTES.md", 2, 0), file("old.txt", 0, 7));
    assertEquals(Optional.of(new DiffStat(3, 5, 8, false)), DiffStat.of(diff));
    assertEquals(
        new JsonObject()
            .put("files", 3)
            .put("additions", 5L)
            .put("deletions", 8L)
            .put("truncated", false),
        DiffStat.of(diff).orElseThrow().toJson());
    assertEquals(
        Optional.of(new DiffStat(1, 4, 0, true)),
        DiffStat.of(diff(true, false, file("big.txt", 4, 0))));
  }

  @Test
  void anEmptyDiffChangesNothing() {
    assertEquals(Optional.of(new DiffStat(0, 0, 0, false)), DiffStat.of(diff(false, false)));
  }

  @Test
  void aDiffThatRanOutOfTimeHasNoStat() {
    assertEquals(
        Optional.empty(), DiffStat.of(diff(true, true, file("a.txt", 0, 0), file("b.txt", 0, 0))));
  }

  private static JsonObject diff(boolean truncated, boolean tooLarge, JsonObject... files) {
    return new JsonObject()
        .put("files", new JsonArray(List.of(files)))
        .put("truncated", truncated)
        .put("too_large", tooLarge);
  }

  private static JsonObject file(String path, int additions, int deletions) {
    return new JsonObject()
        .put("path", path)
        .put("additions", additions)
        .put("deletions", deletions);
  }
}
