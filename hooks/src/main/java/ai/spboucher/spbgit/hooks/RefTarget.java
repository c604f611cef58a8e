package ai.spboucher.spbgit.hooks;

import java.io.IOException;
import org.eclipse.jgit.errors.MissingObjectException;
import org.eclipse.jgit.lib.Constants;
import org.eclipse.jgit.lib.ObjectId;
import org.eclipse.jgit.lib.ObjectReader;

/**
 * What a pushed ref update would make the ref point at, as far as {@link PushGate} needs to know.
 */
public enum RefTarget {
  COMMIT("a commit"),
  ANNOTATED_TAG("an annotated tag"),
  TREE("a tree"),
  BLOB("a blob"),
  /** The object is not in the repository (nor in the push). */
  MISSING("an object the repository does not have"),
  /** The update deletes the ref. */
  DELETION("nothing");

  private final String description;

  RefTarget(String description) {
    this.description = description;
  }

  /** How a refusal names it, e.g. "a blob". */
  public String description() {
    return description;
  }

  /**
   * The type of {@code id} as {@code reader} sees it; {@link #DELETION} for the zero id. Blocking:
   * repository I/O (JGit streams objects above its threshold instead of inflating them, so a large
   * blob is not read whole).
   */
  public static RefTarget of(ObjectReader reader, ObjectId id) throws IOException {
    if (id == null || ObjectId.zeroId().equals(id)) {
      return DELETION;
    }
    try {
      return switch (reader.open(id).getType()) {
        case Constants.OBJ_COMMIT -> COMMIT;
        case Constants.OBJ_TAG -> ANNOTATED_TAG;
        case Constants.OBJ_TREE -> TREE;
        case Constants.OBJ_BLOB -> BLOB;
        default -> MISSING;
      };
    } catch (MissingObjectException e) {
      return MISSING;
    }
  }
}
