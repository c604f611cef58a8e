package ai.spboucher.spbgit.gateway.jobs;

import ai.spboucher.spbgit.gateway.errors.RequestException;
import ai.spboucher.spbgit.gateway.repos.RepoName;
import ai.spboucher.spbgit.gateway.repos.RepositoryStore;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.eclipse.jgit.lib.Constants;
import org.eclipse.jgit.lib.ObjectId;
import org.eclipse.jgit.lib.Ref;
import org.eclipse.jgit.lib.RefUpdate;
import org.eclipse.jgit.lib.Repository;
import org.eclipse.jgit.revwalk.RevCommit;
import org.eclipse.jgit.revwalk.RevObject;
import org.eclipse.jgit.revwalk.RevWalk;

/**
 * The refs of a job's work as its lifecycle moves them: where its proposal and partial work point,
 * fast-forwarding a branch to an approved proposal, and deleting the job's refs. What a diff of the
 * work shows is {@code review}'s. Every method does JGit I/O and blocks: call it from a worker
 * thread.
 */
public record Proposals(RepositoryStore repos) {

  /** How an approval changed the branch. */
  public enum Approval {
    CREATED,
    FAST_FORWARDED,
    ALREADY_AT_PROPOSAL
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
      RevCommit target = commitAt(walk, reviewedProposal(repository, job, sha));
      String refName = "refs/heads/" + branch;
      Ref current = repository.exactRef(refName);
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
      return fastForward(repository, walk, job, branch, current, target);
    }
  }

  /** The job's proposal ref, refused unless it still points at the reviewed {@code sha}. */
  private static Ref reviewedProposal(Repository repository, Job job, String sha)
      throws IOException {
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
    return proposal;
  }

  /** Moves the branch from {@code current} (null: absent) to {@code target}, compare-and-set. */
  private static Approval fastForward(
      Repository repository, RevWalk walk, Job job, String branch, Ref current, RevCommit target)
      throws IOException {
    RefUpdate update = repository.updateRef("refs/heads/" + branch);
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
   * The commit {@code ref} points at. An owner's push (the job gate admits only commits) can point
   * a job ref or a branch at a tag, tree or blob: there is no diff to show for one, and approving
   * it would make a branch point at something that is not a commit, so both are refused as a
   * conflict with what the ref holds.
   */
  public static RevCommit commitAt(RevWalk walk, Ref ref) throws IOException {
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
}
