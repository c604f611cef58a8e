package ai.spboucher.spbgit.gateway.review;

import ai.spboucher.spbgit.gateway.repos.RepositoryStore;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.util.List;
import org.eclipse.jgit.diff.DiffEntry;
import org.eclipse.jgit.diff.DiffFormatter;
import org.eclipse.jgit.diff.Edit;
import org.eclipse.jgit.diff.RawTextComparator;
import org.eclipse.jgit.lib.AbbreviatedObjectId;
import org.eclipse.jgit.lib.Constants;
import org.eclipse.jgit.lib.FileMode;
import org.eclipse.jgit.lib.ObjectId;
import org.eclipse.jgit.lib.ObjectReader;
import org.eclipse.jgit.lib.Repository;
import org.eclipse.jgit.revwalk.RevTree;
import org.eclipse.jgit.revwalk.RevWalk;
import org.eclipse.jgit.util.io.DisabledOutputStream;

/**
 * The diff of a {@link DiffTarget}, file by file with hunks of typed lines, within a {@link
 * DiffBudget}: the engine under {@link ProposalDiffs}. Every method does JGit I/O and blocks: call
 * it from a worker thread.
 */
record FileDiffs(RepositoryStore repos) {

  /** The directory of the repository's job environment ({@code .spbgit/agent.yml}). */
  static final String ENVIRONMENT_DIR = ".spbgit";

  /**
   * The diff of {@code target} as files with hunks of typed lines, labelled with the ref it shows,
   * within {@code budget}: large diffs are truncated, files too big to diff are listed as {@code
   * too_large}, and a diff that runs out of time answers {@code too_large} with a {@code reason}
   * naming the ref to fetch instead.
   *
   * @throws DiffCancelledException when {@code allowance} was cancelled meanwhile
   */
  JsonObject diff(DiffTarget target, DiffBudget budget, DiffAllowance allowance)
      throws IOException {
    allowance.start();
    try (Repository repository = repos.open(target.repo())) {
      List<DiffEntry> entries = scan(repository, target, budget, allowance, true);
      if (allowance.outOfTime()) {
        // Rename detection ran out of time, and then answers no files at all: list them as the
        // trees have them.
        entries = scan(repository, target, budget, allowance, false);
      }
      if (allowance.cancelled()) {
        // Cancelled rename detection answers no files too: that must not pass for an empty diff.
        throw new DiffCancelledException();
      }
      return files(repository, target, budget, allowance, entries);
    }
  }

  private static List<DiffEntry> scan(
      Repository repository,
      DiffTarget target,
      DiffBudget budget,
      DiffAllowance allowance,
      boolean detectRenames)
      throws IOException {
    try (RevWalk walk = new RevWalk(repository);
        DiffFormatter formatter = new DiffFormatter(DisabledOutputStream.INSTANCE)) {
      RevTree head = walk.parseCommit(ObjectId.fromString(target.head())).getTree();
      RevTree base =
          target.base() == null
              ? null
              : walk.parseCommit(ObjectId.fromString(target.base())).getTree();
      formatter.setRepository(repository);
      formatter.setDiffComparator(RawTextComparator.DEFAULT);
      formatter.setDetectRenames(detectRenames);
      if (detectRenames) {
        formatter.getRenameDetector().setRenameLimit(budget.renameLimit());
        formatter
            .getRenameDetector()
            .setBigFileThreshold((int) Math.min(Integer.MAX_VALUE, budget.maxFileBytes()));
        formatter.setProgressMonitor(allowance.asProgressMonitor());
      }
      return formatter.scan(base, head);
    }
  }

  private static JsonObject files(
      Repository repository,
      DiffTarget target,
      DiffBudget budget,
      DiffAllowance allowance,
      List<DiffEntry> entries)
      throws IOException {
    JsonArray files = new JsonArray();
    int lines = 0;
    boolean truncated = entries.size() > budget.maxFiles();
    boolean outOfTime = allowance.outOfTime();
    for (DiffEntry entry : entries.subList(0, Math.min(entries.size(), budget.maxFiles()))) {
      JsonObject file;
      if (outOfTime) {
        file = tooLarge(entry, "the diff ran out of time before this file");
      } else {
        try {
          file = fileDiff(repository, entry, budget, allowance, budget.maxLines() - lines);
        } catch (DiffAllowance.OutOfTime e) {
          outOfTime = true;
          file = tooLarge(entry, "the diff ran out of time in this file");
        }
      }
      lines += file.getInteger("lines_shown");
      truncated |= file.getBoolean("truncated");
      file.remove("lines_shown");
      files.add(file);
    }
    JsonObject diff =
        new JsonObject()
            .put("ref", target.ref())
            .put("kind", target.kind())
            .put("scope", target.scope())
            .put("base", target.base())
            .put("head", target.head())
            .put("descends_from_base", target.descendsFromBase())
            .put("files", files)
            .put("truncated", truncated || outOfTime)
            .put("too_large", outOfTime)
            .put("changes_environment", changesEnvironment(entries))
            .put("changes_cache_key_files", changedKeyFiles(entries, target.cacheKeyFiles()));
    return outOfTime
        ? diff.put(
            "reason",
            "too large to show here: fetch "
                + target.ref()
                + " with git to see it "
                + "(computing this diff took longer than its "
                + allowance.time().toSeconds()
                + " s budget)")
        : diff;
  }

  /**
   * Whether any change touches {@code .spbgit/} (either side, so a rename out of it counts). Every
   * entry counts, not only those listed: the warning must not disappear because the diff was cut.
   */
  static boolean changesEnvironment(List<DiffEntry> entries) {
    return entries.stream()
        .anyMatch(e -> isEnvironmentPath(e.getOldPath()) || isEnvironmentPath(e.getNewPath()));
  }

  /**
   * The environment's cache key files the work changes (either side of any entry, listed or not):
   * the dependencies they name are set up for jobs only once the owner approves them, since setup
   * never runs on a job's work.
   */
  static JsonArray changedKeyFiles(List<DiffEntry> entries, List<String> keyFiles) {
    JsonArray changed = new JsonArray();
    for (String keyFile : keyFiles) {
      if (entries.stream()
          .anyMatch(e -> keyFile.equals(e.getOldPath()) || keyFile.equals(e.getNewPath()))) {
        changed.add(keyFile);
      }
    }
    return changed;
  }

  private static boolean isEnvironmentPath(String path) {
    return path != null && (path.equals(ENVIRONMENT_DIR) || path.startsWith(ENVIRONMENT_DIR + "/"));
  }

  private static JsonObject fileDiff(
      Repository repository,
      DiffEntry entry,
      DiffBudget budget,
      DiffAllowance allowance,
      int lineBudget)
      throws IOException {
    long bytes =
        Math.max(
            blobSize(repository, entry.getOldMode(), entry.getOldId()),
            blobSize(repository, entry.getNewMode(), entry.getNewId()));
    if (bytes > budget.maxFileBytes()) {
      return tooLarge(
          entry,
          "larger than the "
              + (budget.maxFileBytes() >> 10)
              + " KiB a file may have to be "
              + "diffed here");
    }
    allowance.check();
    BudgetedDiff algorithm = new BudgetedDiff(allowance);
    HunkCollector collector = new HunkCollector(lineBudget);
    try (DiffFormatter one = new DiffFormatter(collector)) {
      one.setRepository(repository);
      one.setDiffAlgorithm(algorithm);
      one.setDiffComparator(RawTextComparator.DEFAULT);
      one.format(entry);
    } catch (HunkCollector.Full e) {
      // Everything shown is collected; the counts come from the edit list, which is complete.
    }
    int additions = 0;
    int deletions = 0;
    for (Edit edit : algorithm.edits() == null ? List.<Edit>of() : algorithm.edits()) {
      additions += edit.getLengthB();
      deletions += edit.getLengthA();
    }
    return fileJson(entry)
        .put("additions", additions)
        .put("deletions", deletions)
        .put("binary", collector.binary())
        .put("hunks", collector.hunks())
        .put("truncated", collector.truncated())
        .put("too_large", false)
        .put("lines_shown", collector.shown());
  }

  /** A file listed without its text diff: too big, or past the diff's time. */
  private static JsonObject tooLarge(DiffEntry entry, String reason) {
    return fileJson(entry)
        .put("additions", 0)
        .put("deletions", 0)
        .put("binary", false)
        .put("hunks", new JsonArray())
        .put("truncated", true)
        .put("too_large", true)
        .put("reason", reason)
        .put("lines_shown", 0);
  }

  private static JsonObject fileJson(DiffEntry entry) {
    return new JsonObject()
        .put(
            "path",
            entry.getChangeType() == DiffEntry.ChangeType.DELETE
                ? entry.getOldPath()
                : entry.getNewPath())
        .put(
            "old_path",
            entry.getChangeType() == DiffEntry.ChangeType.ADD ? null : entry.getOldPath())
        .put("change", entry.getChangeType().name());
  }

  /**
   * The size of a blob side of a diff entry; 0 for a missing side, a submodule or a content-less
   * entry.
   */
  private static long blobSize(Repository repository, FileMode mode, AbbreviatedObjectId id)
      throws IOException {
    if (id == null
        || !id.isComplete()
        || mode.getObjectType() != Constants.OBJ_BLOB
        || ObjectId.zeroId().equals(id.toObjectId())) {
      return 0;
    }
    try (ObjectReader reader = repository.newObjectReader()) {
      return reader.getObjectSize(id.toObjectId(), Constants.OBJ_BLOB);
    }
  }

  /** The old and new start lines of a {@code @@ -a,b +c,d @@} header. */
  static int[] hunkStarts(String header) {
    String[] parts = header.split(" ");
    return new int[] {start(parts[1]), start(parts[2])};
  }

  private static int start(String range) {
    String digits = range.substring(1).split(",")[0];
    return Integer.parseInt(digits);
  }
}
