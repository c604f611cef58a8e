package ai.spboucher.spbgit.gateway.environment;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import java.util.TreeSet;
import org.eclipse.jgit.lib.Constants;
import org.eclipse.jgit.lib.FileMode;
import org.eclipse.jgit.lib.ObjectId;
import org.eclipse.jgit.lib.ObjectReader;
import org.eclipse.jgit.lib.Repository;
import org.eclipse.jgit.revwalk.RevTree;
import org.eclipse.jgit.revwalk.RevWalk;
import org.eclipse.jgit.treewalk.TreeWalk;

/**
 * The digest of an environment's {@code cache_key_files} at a job's base commit, as the runner
 * would compute it from a checkout of that commit ({@code JobCache.keyFilesDigest}): SHA-256 (hex)
 * over each file's path and contents (a single -1 byte for a missing file, or one larger than
 * {@link #FILE_LIMIT}), in path order, each length-prefixed by 8 bytes. With it the runner knows
 * the cache key before it clones, and a hit needs no clone container.
 *
 * <p>Only given when the blobs are exactly what a checkout holds: a link on a key file's way (the
 * runner follows links inside the clone) or a {@code .gitattributes} above one (a filter or eol
 * conversion changes the checked-out bytes) makes it empty, and the runner reads the files from a
 * clone as before.
 */
public final class CacheKeyFiles {

  /**
   * The runner's limit on one key file ({@code JobCache.KEY_FILE_LIMIT}): bigger counts missing.
   */
  public static final long FILE_LIMIT = 16 << 20;

  private static final byte[] MISSING = {-1};

  private CacheKeyFiles() {}

  /**
   * The digest of {@code paths} (repository paths in normal form, as {@link EnvironmentFile} checks
   * them) at {@code commit}, or empty when a checkout could hold other bytes. Blocking (JGit): call
   * it on a worker thread.
   */
  public static Optional<String> digest(Repository repository, ObjectId commit, List<String> paths)
      throws IOException {
    MessageDigest sha = sha256();
    try (RevWalk walk = new RevWalk(repository);
        ObjectReader reader = repository.newObjectReader()) {
      RevTree tree = walk.parseCommit(commit).getTree();
      // The runner keys a TreeMap: in String order, each path once.
      for (String path : new TreeSet<>(paths)) {
        if (attributesAbove(reader, tree, path)) {
          return Optional.empty();
        }
        Optional<byte[]> contents = contents(reader, tree, path);
        if (contents == null) {
          return Optional.empty();
        }
        update(sha, path.getBytes(StandardCharsets.UTF_8));
        update(sha, contents.orElse(MISSING));
      }
    }
    return Optional.of(HexFormat.of().formatHex(sha.digest()));
  }

  /**
   * The file's contents as a checkout has them, empty when it has none there (missing, a directory,
   * a submodule, too large), or null when a link is on its way.
   */
  private static Optional<byte[]> contents(ObjectReader reader, RevTree tree, String path)
      throws IOException {
    String[] parts = path.split("/");
    StringBuilder at = new StringBuilder();
    for (int i = 0; i < parts.length; i++) {
      at.append(i == 0 ? "" : "/").append(parts[i]);
      try (TreeWalk entry = TreeWalk.forPath(reader, at.toString(), tree)) {
        if (entry == null) {
          return Optional.empty();
        }
        FileMode mode = entry.getFileMode(0);
        if (mode == FileMode.SYMLINK) {
          return null;
        }
        boolean last = i == parts.length - 1;
        if (!last && mode != FileMode.TREE) {
          return Optional.empty(); // A file or submodule where a directory would be.
        }
        if (last) {
          if (mode != FileMode.REGULAR_FILE && mode != FileMode.EXECUTABLE_FILE) {
            return Optional.empty();
          }
          ObjectId id = entry.getObjectId(0);
          // Sized before it is loaded: the file comes from a push.
          if (reader.getObjectSize(id, Constants.OBJ_BLOB) > FILE_LIMIT) {
            return Optional.empty();
          }
          return Optional.of(reader.open(id, Constants.OBJ_BLOB).getCachedBytes((int) FILE_LIMIT));
        }
      }
    }
    return Optional.empty();
  }

  /** Whether a {@code .gitattributes} lies in the root or any directory above {@code path}. */
  private static boolean attributesAbove(ObjectReader reader, RevTree tree, String path)
      throws IOException {
    String dir = "";
    for (String part : path.split("/")) {
      try (TreeWalk attributes = TreeWalk.forPath(reader, dir + ".gitattributes", tree)) {
        if (attributes != null) {
          return true;
        }
      }
      dir = dir + part + "/";
    }
    return false;
  }

  private static void update(MessageDigest sha, byte[] bytes) {
    sha.update(ByteBuffer.allocate(8).putLong(bytes.length).array());
    sha.update(bytes);
  }

  private static MessageDigest sha256() {
    try {
      return MessageDigest.getInstance("SHA-256");
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }
}
