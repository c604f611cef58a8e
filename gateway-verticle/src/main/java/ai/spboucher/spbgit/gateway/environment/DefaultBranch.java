package ai.spboucher.spbgit.gateway.environment;

import java.io.IOException;
import org.eclipse.jgit.lib.Constants;
import org.eclipse.jgit.lib.ObjectId;
import org.eclipse.jgit.lib.Ref;
import org.eclipse.jgit.lib.Repository;

/**
 * The branch {@code HEAD} names and the commit it points at: where the owner-approved files a job
 * is given come from, never a job's base or a proposal.
 *
 * @param name the branch's short name (e.g. {@code main}), or null when {@code HEAD} names none
 * @param tip the commit it points at, or null for an empty repository
 */
record DefaultBranch(String name, ObjectId tip) {

  /** Blocking (JGit): call it on a worker thread. */
  static DefaultBranch of(Repository repository) throws IOException {
    Ref head = repository.exactRef(Constants.HEAD);
    String target = head != null && head.isSymbolic() ? head.getTarget().getName() : null;
    String name =
        target != null && target.startsWith(Constants.R_HEADS)
            ? target.substring(Constants.R_HEADS.length())
            : null;
    Ref ref = target == null ? null : repository.exactRef(target);
    // An empty repository (or a detached HEAD, which a bare repository here never has) has no tip.
    return new DefaultBranch(name, ref == null ? null : ref.getObjectId());
  }
}
