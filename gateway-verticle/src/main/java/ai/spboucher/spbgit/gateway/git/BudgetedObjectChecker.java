package ai.spboucher.spbgit.gateway.git;

import org.eclipse.jgit.errors.CorruptObjectException;
import org.eclipse.jgit.lib.AnyObjectId;
import org.eclipse.jgit.lib.BlobObjectChecker;
import org.eclipse.jgit.lib.Constants;
import org.eclipse.jgit.lib.ObjectChecker;

/**
 * JGit's object checker, with the default rules ReceivePack's {@code setCheckReceivedObjects(true)}
 * applies, that also charges every object to a {@link PushBudget}. JGit's pack parser shows it each
 * object it inflates: whole blobs chunk by chunk as they stream through, trees, commits and tags
 * whole, and each object it builds from a delta once built. It is the only hook JGit's receive-pack
 * has into delta resolution, so the budget's limits, deadline and stop switch take effect here,
 * between one object (at most {@code SPB_MAX_OBJECT_BYTES}) and the next.
 *
 * <p>Threading: used by the one thread parsing the pack.
 */
final class BudgetedObjectChecker extends ObjectChecker {

  private final PushBudget budget;

  BudgetedObjectChecker(PushBudget budget) {
    this.budget = budget;
  }

  @Override
  public void check(AnyObjectId id, int objType, byte[] raw) throws CorruptObjectException {
    budget.inflating(raw.length);
    if (objType == Constants.OBJ_BLOB) {
      // ObjectChecker would pass a blob through newBlobObjectChecker, and charge it twice.
      checkBlob(raw);
    } else {
      super.check(id, objType, raw);
    }
  }

  @Override
  public BlobObjectChecker newBlobObjectChecker() {
    return new BlobObjectChecker() {
      @Override
      public void update(byte[] in, int offset, int len) {
        budget.inflating(len);
      }

      @Override
      public void endBlob(AnyObjectId id) {
        // Blobs have no structure to check.
      }
    };
  }
}
