package ai.spboucher.spbgit.gateway.jobs;

import ai.spboucher.spbgit.gateway.errors.RequestException;
import ai.spboucher.spbgit.gateway.repos.RepoName;
import ai.spboucher.spbgit.gateway.repos.RepositoryStore;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.eclipse.jgit.diff.DiffEntry;
import org.eclipse.jgit.diff.DiffFormatter;
import org.eclipse.jgit.diff.Edit;
import org.eclipse.jgit.diff.RawTextComparator;
import org.eclipse.jgit.lib.AbbreviatedObjectId;
import org.eclipse.jgit.lib.Constants;
import org.eclipse.jgit.lib.FileMode;
import org.eclipse.jgit.lib.ObjectId;
import org.eclipse.jgit.lib.ObjectReader;
import org.eclipse.jgit.lib.Ref;
import org.eclipse.jgit.lib.RefUpdate;
import org.eclipse.jgit.lib.Repository;
import org.eclipse.jgit.revwalk.RevCommit;
import org.eclipse.jgit.revwalk.RevObject;
import org.eclipse.jgit.revwalk.RevTree;
import org.eclipse.jgit.revwalk.RevWalk;
import org.eclipse.jgit.revwalk.filter.RevFilter;
import org.eclipse.jgit.util.io.DisabledOutputStream;

/**
 * The git side of reviewing a job: reading its proposal, diffing it against where the job started,
 * fast-forwarding a branch to it, and deleting the job's refs. Every method does JGit I/O and
 * blocks: call it from a worker thread.
 */
public final class Proposals {

  /** How an approval changed the branch. */
  public enum Approval {
    CREATED,
    FAST_FORWARDED,
    ALREADY_AT_PROPOSAL
  }

  /** The directory of the repository's job environment ({@code .spbgit/agent.yml}). */
  static final String ENVIRONMENT_DIR = ".spbgit";

  private final RepositoryStore repos;

  public Proposals(RepositoryStore repos) {
    this.repos = repos;
  }

  /** The commit the branch points at now, or null. */
  public String branchSha(RepoName repo, String branch) throws IOException {
    try (Repository repository = repos.open(repo)) {
      Ref ref = repository.exactRef("refs/heads/" + branch);
      return ref == null ? null : ref.getObjectId().name();
    }
  }

  /**
   * Where each job's proposal and partial refs point now (absent for a job that has pushed
   * neither).
   */
  public Map<String, WorkShas> workShas(RepoName repo, List<Job> jobs) throws IOException {
    Map<String, WorkShas> shas = new HashMap<>();
    try (Repository repository = repos.open(repo)) {
      for (Job job : jobs) {
        String proposal = shaOf(repository, WorkRef.PROPOSAL.refOf(job));
        String partial = shaOf(repository, WorkRef.PARTIAL.refOf(job));
        if (proposal != null || partial != null) {
          shas.put(job.id(), new WorkShas(proposal, partial));
        }
      }
    }
    return shas;
  }

  private static String shaOf(Repository repository, String refName) throws IOException {
    Ref ref = repository.exactRef(refName);
    return ref == null ? null : ref.getObjectId().name();
  }

  /**
   * Fast-forwards (or creates) {@code refs/heads/<branch>} to the proposal, only if the proposal is
   * still the commit the owner reviewed ({@code sha}) and the branch's current commit is an
   * ancestor of it. The update itself is a compare-and-set on the branch's old value, so a
   * concurrent push cannot be overwritten. Only the proposal is ever approved: partial work is what
   * a stopped agent had, and is refused like no work at all.
   */
  public Approval approve(RepoName repo, Job job, String branch, String sha) throws IOException {
    try (Repository repository = repos.open(repo);
        RevWalk walk = new RevWalk(repository)) {
      Ref proposal = repository.exactRef(job.proposalRef());
      if (proposal == null) {
        String partial = WorkRef.PARTIAL.refOf(job);
        throw new RequestException.Conflict(
            "job "
                + job.id()
                + " has no proposal to approve"
                + (repository.exactRef(partial) == null
                    ? ""
                    : "; its partial work ("
                        + partial
                        + ") is for review only and cannot be approved"));
      }
      if (!proposal.getObjectId().name().equals(sha)) {
        throw new RequestException.Conflict(
            "the proposal is now "
                + proposal.getObjectId().name()
                + ", not the "
                + sha
                + " that was reviewed; reload and review it again");
      }
      String refName = "refs/heads/" + branch;
      Ref current = repository.exactRef(refName);
      RevCommit target = commitAt(walk, proposal);
      if (job.revision() != null
          && job.originalBaseSha() != null
          && !walk.isMergedInto(
              walk.parseCommit(ObjectId.fromString(job.originalBaseSha())), target)) {
        // A revision's checkout starts on its chain's work, but what it pushes is the agent's:
        // one that rewrote history away from where the chain started is not this change.
        throw new RequestException.Conflict(
            "revision "
                + job.revision().number()
                + " (job "
                + job.id()
                + ") does not descend from "
                + job.originalBaseSha()
                + ", where its chain of revisions started; it cannot be approved");
      }
      if (current != null && current.getObjectId().equals(target)) {
        return Approval.ALREADY_AT_PROPOSAL;
      }
      if (current != null && !walk.isMergedInto(commitAt(walk, current), target)) {
        throw new RequestException.Conflict(
            "approving would not be a fast-forward: "
                + branch
                + " is at "
                + current.getObjectId().name()
                + ", which the proposal does not contain");
      }
      RefUpdate update = repository.updateRef(refName);
      update.setNewObjectId(target);
      update.setExpectedOldObjectId(current == null ? ObjectId.zeroId() : current.getObjectId());
      update.setRefLogMessage("approved agent job " + job.id(), false);
      RefUpdate.Result result = update.update(walk);
      return switch (result) {
        case NEW -> Approval.CREATED;
        case FAST_FORWARD -> Approval.FAST_FORWARDED;
        case NO_CHANGE -> Approval.ALREADY_AT_PROPOSAL;
        default ->
            throw new RequestException.Conflict(
                "could not update "
                    + branch
                    + ": "
                    + result
                    + " (it changed meanwhile; reload and try again)");
      };
    }
  }

  /**
   * Deletes every ref under the job's prefix and returns their names; nothing outside it is
   * touched.
   */
  public List<String> deleteRefs(RepoName repo, Job job) throws IOException {
    List<String> deleted = new ArrayList<>();
    try (Repository repository = repos.open(repo)) {
      for (Ref ref : repository.getRefDatabase().getRefsByPrefix(job.refPrefix())) {
        RefUpdate update = repository.updateRef(ref.getName());
        update.setExpectedOldObjectId(ref.getObjectId());
        update.setForceUpdate(true);
        RefUpdate.Result result = update.delete();
        if (result != RefUpdate.Result.FORCED && result != RefUpdate.Result.NO_CHANGE) {
          throw new IOException("could not delete " + ref.getName() + ": " + result);
        }
        deleted.add(ref.getName());
      }
    }
    return deleted;
  }

  /**
   * What the diff of the job's proposal or partial work compares: the work against the commit the
   * job started from (the merge base of the work and the job's base branch, or the recorded base
   * commit). For a revision, {@link DiffScope#REVISION} compares against the work it revised, and
   * {@link DiffScope#CUMULATIVE} against the commit its chain's first job started from.
   */
  public DiffTarget diffTarget(RepoName repo, Job job, WorkRef which, DiffScope scope)
      throws IOException {
    try (Repository repository = repos.open(repo);
        RevWalk walk = new RevWalk(repository)) {
      Ref work = repository.exactRef(which.refOf(job));
      if (work == null) {
        throw new RequestException.NotFound(missingWork(repository, job, which));
      }
      RevCommit head = commitAt(walk, work);
      String since =
          job.revision() == null
              ? null
              : scope == DiffScope.REVISION ? job.baseSha() : job.originalBaseSha();
      RevCommit base;
      boolean descends;
      if (since == null) {
        // A merge base: the work descends from it by definition.
        base = baseOf(repository, walk, job, head);
        descends = true;
      } else {
        // A revision's bases are fixed commits, compared tree to tree: if its agent rewrote
        // history (dropped the previous revision's work, say), the diff shows that as the removal
        // it is, and says the work no longer descends from there.
        base = walk.parseCommit(ObjectId.fromString(since));
        descends = walk.isMergedInto(base, head);
      }
      return new DiffTarget(
          repo,
          which.refOf(job),
          which.label(),
          base == null ? null : base.name(),
          head.name(),
          scope.label(),
          descends,
          cacheKeyFiles(job));
    }
  }

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

  /** The job's environment's cache key files; none for a job recorded before environments. */
  private static List<String> cacheKeyFiles(Job job) {
    if (job.environment() == null) {
      return List.of();
    }
    return job.environment().getJsonArray("cache_key_files", new JsonArray()).stream()
        .map(String::valueOf)
        .toList();
  }

  private static boolean isEnvironmentPath(String path) {
    return path != null && (path.equals(ENVIRONMENT_DIR) || path.startsWith(ENVIRONMENT_DIR + "/"));
  }

  /**
   * The commit {@code ref} points at. An owner's push (the job gate admits only commits) can point
   * a job ref or a branch at a tag, tree or blob: there is no diff to show for one, and approving
   * it would make a branch point at something that is not a commit, so both are refused as a
   * conflict with what the ref holds.
   */
  private static RevCommit commitAt(RevWalk walk, Ref ref) throws IOException {
    RevObject object = walk.parseAny(ref.getObjectId());
    if (object instanceof RevCommit commit) {
      return commit;
    }
    throw new RequestException.Conflict(
        ref.getName()
            + " points at a "
            + Constants.typeString(object.getType())
            + " ("
            + object.name()
            + "), not a commit; only commits can be reviewed and approved");
  }

  /** Says what is missing, and where the job's other work is when it has some. */
  private static String missingWork(Repository repository, Job job, WorkRef which)
      throws IOException {
    WorkRef other = which == WorkRef.PROPOSAL ? WorkRef.PARTIAL : WorkRef.PROPOSAL;
    String missing = "job " + job.id() + " has no " + which.noun();
    return repository.exactRef(other.refOf(job)) == null
        ? missing
        : missing + "; its " + other.noun() + " is at ?ref=" + other.label();
  }

  private static RevCommit baseOf(Repository repository, RevWalk walk, Job job, RevCommit head)
      throws IOException {
    Ref branch = repository.exactRef("refs/heads/" + job.baseRef());
    RevCommit other =
        branch != null
            ? commitAt(walk, branch)
            : job.baseSha() == null ? null : walk.parseCommit(ObjectId.fromString(job.baseSha()));
    if (other == null) {
      return head.getParentCount() > 0 ? walk.parseCommit(head.getParent(0)) : null;
    }
    return mergeBase(walk, head, other);
  }

  /**
   * The merge base of two commits: {@code other} itself when {@code head} descends from it, null
   * when they share no history (an agent's push can make one up).
   */
  private static RevCommit mergeBase(RevWalk walk, RevCommit head, RevCommit other)
      throws IOException {
    walk.reset();
    walk.setRevFilter(RevFilter.MERGE_BASE);
    walk.markStart(walk.parseCommit(head));
    walk.markStart(walk.parseCommit(other));
    RevCommit mergeBase = walk.next();
    walk.reset();
    walk.setRevFilter(RevFilter.ALL);
    return mergeBase;
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
