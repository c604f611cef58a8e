package org.eclipse.jgit.internal.storage.file;

import java.io.IOException;
import java.io.InputStream;
import org.eclipse.jgit.lib.AnyObjectId;
import org.eclipse.jgit.lib.ObjectId;
import org.eclipse.jgit.lib.ObjectInserter;
import org.eclipse.jgit.lib.ProgressMonitor;
import org.eclipse.jgit.transport.PackLock;
import org.eclipse.jgit.transport.PackParser;
import org.eclipse.jgit.transport.PackedObjectInfo;

/**
 * JGit's own pack parser for a file repository, reporting to a {@link Bounds} what each object costs: the bytes
 * it inflates, the depth of every delta chain, and a checkpoint before each step of work, so a push can be
 * stopped between objects and between the chunks of one object. Throwing from a callback aborts the parse;
 * JGit then deletes its temporary pack and index, and nothing reaches the repository.
 *
 * <p>This one class lives in JGit's package because {@link ObjectDirectoryPackParser}'s constructor is
 * package-private and JGit offers no other hook into delta resolution (ReceivePack polls no progress monitor of
 * ours, and its object checker sees an object only after it was built). {@code PushBoundsIT} fails if a JGit
 * upgrade changes the callbacks used here.
 *
 * <p>Threading: used by the one thread parsing the pack; the callbacks run on that thread.
 */
public final class BoundedPackParser extends ObjectDirectoryPackParser {

  /** What a pack may cost; each method may throw to abort the parse. */
  public interface Bounds {

    /** Called before JGit inflates {@code bytes} more, whole object or delta instructions. */
    void inflating(long bytes) throws IOException;

    /** Called after a delta was applied, giving an object of {@code bytes} at {@code depth} (1 = on a base). */
    void resolved(long bytes, int depth) throws IOException;

    /** Called before each chunk of work; throws when the push has to stop (deadline, cancellation). */
    void checkpoint() throws IOException;

    /**
     * Called before the parse applies its first delta, the CPU-bound phase that keeps a base and the object it
     * builds in memory; may wait. {@link #parseEnded} follows whatever happens.
     */
    void resolvingDeltas() throws IOException;

    /** Called once the parse has ended, well or not. */
    void parseEnded();
  }

  private final Bounds bounds;
  private boolean resolving;

  private BoundedPackParser(FileObjectDatabase odb, InputStream src, Bounds bounds) {
    super(odb, src);
    this.bounds = bounds;
  }

  /** An inserter for {@code repo} whose pack parser is bounded; every other call goes to JGit's inserter. */
  public static ObjectInserter inserter(FileRepository repo, ObjectInserter jgit, Bounds bounds) {
    return new ObjectInserter.Filter() {
      @Override
      protected ObjectInserter delegate() {
        return jgit;
      }

      @Override
      public PackParser newPackParser(InputStream in) {
        return new BoundedPackParser(repo.getObjectDatabase(), in, bounds);
      }
    };
  }

  @Override
  public PackLock parse(ProgressMonitor receiving, ProgressMonitor resolving) throws IOException {
    try {
      return super.parse(receiving, resolving);
    } finally {
      bounds.parseEnded();
    }
  }

  @Override
  protected void onBeginWholeObject(long streamPosition, int type, long inflatedSize) throws IOException {
    bounds.inflating(inflatedSize);
    super.onBeginWholeObject(streamPosition, type, inflatedSize);
  }

  @Override
  protected void onBeginOfsDelta(long streamPosition, long baseStreamPosition, long inflatedSize)
      throws IOException {
    bounds.inflating(inflatedSize);
    super.onBeginOfsDelta(streamPosition, baseStreamPosition, inflatedSize);
  }

  @Override
  protected void onBeginRefDelta(long streamPosition, AnyObjectId baseId, long inflatedSize) throws IOException {
    bounds.inflating(inflatedSize);
    super.onBeginRefDelta(streamPosition, baseId, inflatedSize);
  }

  /** Every few KiB of compressed input or of the temporary pack: a 1000:1 zlib stream ends no sooner. */
  @Override
  protected void onObjectData(Source src, byte[] raw, int pos, int len) throws IOException {
    bounds.checkpoint();
    super.onObjectData(src, raw, pos, len);
  }

  /** Before each delta is read back and applied, the expensive step a delta bomb multiplies. */
  @Override
  protected ObjectTypeAndSize seekDatabase(UnresolvedDelta delta, ObjectTypeAndSize info) throws IOException {
    bounds.checkpoint();
    startResolving();
    return super.seekDatabase(delta, info);
  }

  /** Remembers each object's delta depth: JGit passes a delta's base as the info it made for that base. */
  @Override
  protected PackedObjectInfo newInfo(AnyObjectId id, UnresolvedDelta delta, ObjectId deltaBase) {
    int depth = deltaBase == null ? 0 : deltaBase instanceof DepthInfo base ? base.depth + 1 : 1;
    DepthInfo info = new DepthInfo(id, depth);
    if (delta != null) {
      info.setCRC(delta.getCRC());
    }
    return info;
  }

  @Override
  protected void onInflatedObjectData(PackedObjectInfo obj, int typeCode, byte[] data) throws IOException {
    if (obj instanceof DepthInfo info && info.depth > 0) {
      bounds.resolved(data.length, info.depth);
    }
    super.onInflatedObjectData(obj, typeCode, data);
  }

  private void startResolving() throws IOException {
    if (!resolving) {
      bounds.resolvingDeltas();
      resolving = true;
    }
  }

  /** An object's entry with its depth: 0 for a whole object (or a thin pack's base), else its base's + 1. */
  private static final class DepthInfo extends PackedObjectInfo {
    final int depth;

    DepthInfo(AnyObjectId id, int depth) {
      super(id);
      this.depth = depth;
    }
  }
}
