package ai.spboucher.spbgit.gateway.git;

import java.io.File;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import org.eclipse.jgit.internal.storage.file.ObjectDirectoryPackParser;
import org.eclipse.jgit.internal.storage.file.Pack;
import org.eclipse.jgit.internal.storage.file.PackFile;
import org.eclipse.jgit.internal.storage.pack.PackExt;
import org.eclipse.jgit.lib.Constants;
import org.eclipse.jgit.lib.ObjectId;
import org.eclipse.jgit.lib.ProgressMonitor;
import org.eclipse.jgit.transport.ConnectivityChecker;
import org.eclipse.jgit.transport.PackParser;
import org.eclipse.jgit.transport.PackedObjectInfo;

/**
 * Refuses a received pack whose delta chains are deeper than the budget allows, before JGit's own
 * connectivity check and before any ref is updated, and deletes that pack so no later push can
 * point a ref at its objects. JGit stores deltas as they arrive, so every later read of the last
 * object of a chain of depth n applies n deltas. The depth is read from the headers of the pack
 * JGit has just written (a few bytes per object, nothing inflated): JGit's parser keeps it to
 * itself, and it is the only place that knows which object was a delta on which. JGit has already
 * appended a thin pack's outside bases to the pack, whole.
 *
 * <p>Threading: runs on the thread running the push.
 */
final class DeltaDepthCheck implements ConnectivityChecker {

  /** Type and size (at most 10 bytes) and then a base offset (at most 10) or base id (20). */
  private static final int MAX_HEADER = 32;

  private final ConnectivityChecker jgit;
  private final PushBudget budget;

  DeltaDepthCheck(ConnectivityChecker jgit, PushBudget budget) {
    this.jgit = jgit;
    this.budget = budget;
  }

  @Override
  public void checkConnectivity(ConnectivityCheckInfo info, Set<ObjectId> haves, ProgressMonitor pm)
      throws IOException {
    if (info.getParser() instanceof ObjectDirectoryPackParser parser && parser.getPack() != null) {
      Pack pack = parser.getPack();
      int depth = deepestChain(parser, pack.getPackFile());
      try {
        budget.checkDeltaDepth(depth);
      } catch (PushLimitException tooDeep) {
        delete(pack);
        throw tooDeep;
      }
    }
    jgit.checkConnectivity(info, haves, pm);
  }

  /**
   * The longest chain of deltas in {@code packFile}, whose objects {@code parser} has just listed.
   */
  static int deepestChain(PackParser parser, File packFile) throws IOException {
    int count = parser.getObjectCount();
    Map<ObjectId, Long> offsetOf = new HashMap<>(count * 2);
    for (int i = 0; i < count; i++) {
      PackedObjectInfo object = parser.getObject(i);
      offsetOf.put(object.copy(), object.getOffset());
    }
    Map<Long, Long> baseOf = new HashMap<>(count * 2);
    byte[] header = new byte[MAX_HEADER];
    try (RandomAccessFile in = new RandomAccessFile(packFile, "r")) {
      for (long offset : offsetOf.values()) {
        readHeader(in, offset, header);
        Long base = baseOffset(offset, header, offsetOf);
        if (base != null) {
          baseOf.put(offset, base);
        }
      }
    }
    Map<Long, Integer> depthOf = new HashMap<>(baseOf.size() * 2);
    int deepest = 0;
    for (Long start : baseOf.keySet()) {
      // Walk down to a known depth or a whole object, then number the walk on the way back.
      ArrayDeque<Long> walk = new ArrayDeque<>();
      Long at = start;
      while (at != null && !depthOf.containsKey(at) && baseOf.containsKey(at)) {
        walk.push(at);
        at = baseOf.get(at);
      }
      int depth = at != null && depthOf.containsKey(at) ? depthOf.get(at) : 0;
      while (!walk.isEmpty()) {
        depthOf.put(walk.pop(), ++depth);
      }
      deepest = Math.max(deepest, depth);
    }
    return deepest;
  }

  private static void readHeader(RandomAccessFile in, long offset, byte[] header)
      throws IOException {
    in.seek(offset);
    int n = 0;
    while (n < header.length) {
      int r = in.read(header, n, header.length - n);
      if (r < 0) {
        break;
      }
      n += r;
    }
  }

  /** The offset of the base of the object whose header is {@code h}, or null for a whole object. */
  private static Long baseOffset(long offset, byte[] h, Map<ObjectId, Long> offsetOf) {
    int p = 0;
    int c = h[p++] & 0xff;
    int type = (c >> 4) & 7;
    while ((c & 0x80) != 0) {
      c = h[p++] & 0xff;
    }
    if (type == Constants.OBJ_OFS_DELTA) {
      c = h[p++] & 0xff;
      long distance = c & 127;
      while ((c & 128) != 0) {
        c = h[p++] & 0xff;
        distance = ((distance + 1) << 7) + (c & 127);
      }
      return offset - distance;
    }
    if (type == Constants.OBJ_REF_DELTA) {
      // After thin-pack completion every base is in the pack; an unknown one would be a base
      // outside it.
      return offsetOf.getOrDefault(ObjectId.fromRaw(h, p), -1L);
    }
    return null;
  }

  /** Removes a refused pack; its .keep goes when ReceivePack unlocks it. */
  private static void delete(Pack pack) throws IOException {
    pack.close();
    PackFile packFile = pack.getPackFile();
    for (PackExt ext : PackExt.values()) {
      if (ext != PackExt.KEEP) {
        Files.deleteIfExists(packFile.create(ext).toPath());
      }
    }
  }
}
