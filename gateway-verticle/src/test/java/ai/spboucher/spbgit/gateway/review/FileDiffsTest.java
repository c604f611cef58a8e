package ai.spboucher.spbgit.gateway.review;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.spboucher.spbgit.gateway.repos.RepoName;
import ai.spboucher.spbgit.gateway.repos.RepositoryStore;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.eclipse.jgit.lib.CommitBuilder;
import org.eclipse.jgit.lib.Constants;
import org.eclipse.jgit.lib.FileMode;
import org.eclipse.jgit.lib.ObjectId;
import org.eclipse.jgit.lib.ObjectInserter;
import org.eclipse.jgit.lib.PersonIdent;
import org.eclipse.jgit.lib.Repository;
import org.eclipse.jgit.lib.TreeFormatter;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@link FileDiffs#diff} within its budget, on real repositories on disk. */
class FileDiffsTest {

  private static final RepoName REPO = RepoName.of("demo");
  private static final DiffBudget DEFAULT = DiffBudget.withTime(DiffBudget.DEFAULT_TIME);

  @TempDir Path tmp;
  private RepositoryStore repos;
  private FileDiffs files;

  @BeforeEach
  void createRepository() throws Exception {
    repos = new RepositoryStore(tmp);
    repos.create(REPO, "");
    files = new FileDiffs(repos);
  }

  @Test
  void showsAChangeAsNumberedTypedLinesWithItsCounts() throws Exception {
    JsonObject diff =
        diff(
            Map.of("README.md", "one\ntwo\nthree\n"),
            Map.of("README.md", "one\n2\nthree\nfour\n"),
            DEFAULT);
    assertFalse(diff.getBoolean("too_large"));
    assertFalse(diff.getBoolean("truncated"));
    JsonObject readme = diff.getJsonArray("files").getJsonObject(0);
    assertEquals(2, readme.getInteger("additions"));
    assertEquals(1, readme.getInteger("deletions"));
    assertFalse(readme.getBoolean("too_large"));
    JsonObject hunk = readme.getJsonArray("hunks").getJsonObject(0);
    assertEquals("@@ -1,3 +1,4 @@", hunk.getString("header"));
    assertEquals(
        List.of(
            "context 1 1 one",
            "del 2 null two",
            "add null 2 2",
            "context 3 3 three",
            "add null 4 four"),
        lines(hunk));
  }

  @Test
  void namesTheCacheKeyFilesTheWorkChangesEvenBeyondTheFilesShown() throws Exception {
    Map<String, String> before = new java.util.TreeMap<>();
    Map<String, String> after = new java.util.TreeMap<>();
    for (int i = 0; i < 5; i++) {
      before.put("a" + i + ".txt", "x\n");
      after.put("a" + i + ".txt", "y\n");
    }
    before.put("package-lock.json", "{}\n");
    after.put("package-lock.json", "{\"planted\": 1}\n");
    before.put("requirements.txt", "a\n");
    after.put("requirements.txt", "a\n");
    DiffBudget twoFiles = new DiffBudget(DiffBudget.DEFAULT_TIME, 1 << 20, 2, 20_000, 100);
    JsonObject diff =
        files.diff(
            target(before, after, List.of("package-lock.json", "requirements.txt")),
            twoFiles,
            new DiffAllowance(twoFiles.time()));
    assertTrue(diff.getBoolean("truncated"), "the lockfile is not among the files shown");
    assertEquals(
        new io.vertx.core.json.JsonArray().add("package-lock.json"),
        diff.getJsonArray("changes_cache_key_files"));
  }

  @Test
  void stillDetectsRenamesAndBinaryFiles() throws Exception {
    String body = "a line that stays the same\n".repeat(20);
    JsonObject diff =
        diff(
            Map.of("old.txt", body, "logo.bin", "\0\1\2"),
            Map.of("new.txt", body + "one more\n", "logo.bin", "\0\1\3"),
            DEFAULT);
    assertTrue(file(diff, "logo.bin").getBoolean("binary"));
    JsonObject renamed = file(diff, "new.txt");
    assertEquals("RENAME", renamed.getString("change"), diff.encodePrettily());
    assertEquals("old.txt", renamed.getString("old_path"));
    assertEquals(1, renamed.getInteger("additions"));
  }

  @Test
  void cutsLinesAtTheLineBudgetButCountsThemAll() throws Exception {
    DiffBudget tenLines =
        new DiffBudget(DiffBudget.DEFAULT_TIME, DiffBudget.DEFAULT_MAX_FILE_BYTES, 300, 10, 100);
    JsonObject diff =
        diff(Map.of("a.txt", "x\n"), Map.of("a.txt", "x\n" + "added\n".repeat(100)), tenLines);
    assertTrue(diff.getBoolean("truncated"));
    assertFalse(diff.getBoolean("too_large"), "cut by the line budget, not too large");
    JsonObject file = diff.getJsonArray("files").getJsonObject(0);
    assertEquals(100, file.getInteger("additions"));
    assertEquals(10, file.getJsonArray("hunks").getJsonObject(0).getJsonArray("lines").size());
  }

  @Test
  void listsAFileAboveTheByteBudgetWithoutDiffingIt() throws Exception {
    DiffBudget oneKib = new DiffBudget(DiffBudget.DEFAULT_TIME, 1024, 300, 20_000, 100);
    JsonObject diff =
        diff(
            Map.of("big.txt", "x\n", "small.txt", "a\n"),
            Map.of("big.txt", "y\n".repeat(1000), "small.txt", "b\n"),
            oneKib);
    JsonObject big = diff.getJsonArray("files").getJsonObject(0);
    assertTrue(big.getBoolean("too_large"));
    assertEquals(
        "larger than the 1 KiB a file may have to be diffed here", big.getString("reason"));
    assertEquals(0, big.getJsonArray("hunks").size());
    JsonObject small = diff.getJsonArray("files").getJsonObject(1);
    assertFalse(small.getBoolean("too_large"));
    assertEquals(
        List.of("del 1 null a", "add null 1 b"),
        lines(small.getJsonArray("hunks").getJsonObject(0)));
    assertTrue(diff.getBoolean("truncated"));
    assertFalse(diff.getBoolean("too_large"), "the rest of the diff is shown");
  }

  @Test
  void answersTooLargeWhenTheDiffRunsOutOfTime() throws Exception {
    DiffBudget oneSecond = DiffBudget.withTime(Duration.ofSeconds(1));
    JsonObject diff =
        diff(
            Map.of("letters.txt", "a\nb\n".repeat(50_000), "z.txt", "z\n"),
            Map.of("letters.txt", "a\na\nb\nb\n".repeat(25_000), "z.txt", "zz\n"),
            oneSecond);
    assertTrue(diff.getBoolean("too_large"));
    assertTrue(diff.getBoolean("truncated"));
    assertTrue(
        diff.getString("reason")
            .startsWith("too large to show here: fetch refs/agents/j1/proposal with git"),
        diff.getString("reason"));
    JsonArray files = diff.getJsonArray("files");
    assertEquals(
        "the diff ran out of time in this file", files.getJsonObject(0).getString("reason"));
    assertEquals(
        "the diff ran out of time before this file", files.getJsonObject(1).getString("reason"));
  }

  @Test
  void stopsWhenCancelled() throws Exception {
    DiffTarget target =
        target(
            Map.of("letters.txt", "a\nb\n".repeat(50_000)),
            Map.of("letters.txt", "a\na\nb\nb\n".repeat(25_000)));
    DiffAllowance allowance = new DiffAllowance(Duration.ofMinutes(10));
    ScheduledExecutorService canceller = Executors.newSingleThreadScheduledExecutor();
    try {
      canceller.schedule(allowance::cancel, 300, TimeUnit.MILLISECONDS);
      assertThrows(DiffCancelledException.class, () -> files.diff(target, DEFAULT, allowance));
    } finally {
      canceller.shutdownNow();
    }
  }

  private JsonObject diff(Map<String, String> before, Map<String, String> after, DiffBudget budget)
      throws Exception {
    return files.diff(target(before, after), budget, new DiffAllowance(budget.time()));
  }

  private DiffTarget target(Map<String, String> before, Map<String, String> after)
      throws Exception {
    return target(before, after, List.of());
  }

  private DiffTarget target(
      Map<String, String> before, Map<String, String> after, List<String> cacheKeyFiles)
      throws Exception {
    try (Repository repository = repos.open(REPO)) {
      ObjectId base = commit(repository, before, null);
      ObjectId head = commit(repository, after, base);
      return new DiffTarget(
          REPO,
          "refs/agents/j1/proposal",
          "proposal",
          base.name(),
          head.name(),
          DiffScope.CUMULATIVE.label(),
          true,
          cacheKeyFiles);
    }
  }

  private static ObjectId commit(Repository repository, Map<String, String> files, ObjectId parent)
      throws Exception {
    try (ObjectInserter inserter = repository.newObjectInserter()) {
      TreeFormatter tree = new TreeFormatter();
      for (Map.Entry<String, String> file : new TreeMap<>(files).entrySet()) {
        tree.append(
            file.getKey(),
            FileMode.REGULAR_FILE,
            inserter.insert(Constants.OBJ_BLOB, file.getValue().getBytes(StandardCharsets.UTF_8)));
      }
      CommitBuilder commit = new CommitBuilder();
      commit.setTreeId(inserter.insert(tree));
      PersonIdent who = new PersonIdent("Test", "test@example.org");
      commit.setAuthor(who);
      commit.setCommitter(who);
      commit.setMessage("test\n");
      if (parent != null) {
        commit.setParentId(parent);
      }
      ObjectId id = inserter.insert(commit);
      inserter.flush();
      return id;
    }
  }

  private static JsonObject file(JsonObject diff, String path) {
    return diff.getJsonArray("files").stream()
        .map(JsonObject.class::cast)
        .filter(f -> path.equals(f.getString("path")))
        .findFirst()
        .orElseThrow(() -> new AssertionError(path));
  }

  private static List<String> lines(JsonObject hunk) {
    return hunk.getJsonArray("lines").stream()
        .map(JsonObject.class::cast)
        .map(
            l ->
                l.getString("type")
                    + " "
                    + l.getValue("old")
                    + " "
                    + l.getValue("new")
                    + " "
                    + l.getString("text"))
        .toList();
  }
}
