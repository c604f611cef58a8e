package ai.spboucher.spbgit.gateway.review;

import ai.spboucher.spbgit.gateway.errors.RequestException;
import ai.spboucher.spbgit.gateway.jobs.Job;
import ai.spboucher.spbgit.gateway.jobs.Proposals;
import ai.spboucher.spbgit.gateway.jobs.WorkRef;
import ai.spboucher.spbgit.gateway.repos.RepoName;
import ai.spboucher.spbgit.gateway.repos.RepositoryStore;
import io.vertx.core.json.JsonArray;
import java.io.IOException;
import java.util.List;
import org.eclipse.jgit.lib.ObjectId;
import org.eclipse.jgit.lib.Ref;
import org.eclipse.jgit.lib.Repository;
import org.eclipse.jgit.revwalk.RevCommit;
import org.eclipse.jgit.revwalk.RevWalk;
import org.eclipse.jgit.revwalk.filter.RevFilter;

/**
 * Finds what a diff of a job's work compares ({@link DiffTarget}): the work's commit and the commit
 * it is compared against. Every method does JGit I/O and blocks: call it from a worker thread.
 */
record DiffTargets(RepositoryStore repos) {

  /**
   * What the diff of the job's proposal or partial work compares: the work against the commit the
   * job started from (the merge base of the work and the job's base branch, or the recorded base
   * commit). For a revision, {@link DiffScope#REVISION} compares against the work it revised, and
   * {@link DiffScope#CUMULATIVE} against the commit its chain's first job started from.
   */
  DiffTarget of(RepoName repo, Job job, WorkRef which, DiffScope scope) throws IOException {
    try (Repository repository = repos.open(repo);
        RevWalk walk = new RevWalk(repository)) {
      Ref work = repository.exactRef(which.refOf(job));
      if (work == null) {
        throw new RequestException.NotFound(missingWork(repository, job, which));
      }
      RevCommit head = Proposals.commitAt(walk, work);
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

  /** The job's environment's cache key files; none for a job recorded before environments. */
  private static List<String> cacheKeyFiles(Job job) {
    if (job.environment() == null) {
      return List.of();
    }
    return job.environment().getJsonArray("cache_key_files", new JsonArray()).stream()
        .map(String::valueOf)
        .toList();
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
            ? Proposals.commitAt(walk, branch)
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
}
