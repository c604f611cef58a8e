package ai.spboucher.spbgit.gateway.environment;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import org.eclipse.jgit.lib.Constants;
import org.eclipse.jgit.lib.FileMode;
import org.eclipse.jgit.lib.ObjectId;
import org.eclipse.jgit.lib.ObjectReader;
import org.eclipse.jgit.lib.Repository;
import org.eclipse.jgit.revwalk.RevWalk;
import org.eclipse.jgit.treewalk.TreeWalk;

/**
 * The owner's standing instructions for the built-in agent: {@code AGENTS.md} at the root of the
 * repository's default branch when a job is created. Like {@code .spbgit/agent.yml} it is read from
 * the default branch only, so a job's base, a proposal or the job's own edits never change what a
 * job is given; only an owner's push or approval onto the default branch does.
 *
 * @param blob the file's git blob id, or null when the default branch has no {@code AGENTS.md}
 * @param text the file's text, empty without one
 */
public record RepositoryInstructions(String blob, String text) {

  /** Where the file lives in a repository. */
  public static final String PATH = "AGENTS.md";

  /**
   * The largest file given to the model. Larger is refused rather than cut: a truncated file could
   * lose the very rule the owner put last, and the model would never know.
   */
  public static final int MAX_BYTES = 32 * 1024;

  /** No {@code AGENTS.md}: the agent runs with its own instructions only. */
  public static final RepositoryInstructions NONE = new RepositoryInstructions(null, "");

  /**
   * Reads the file from the commit the default branch points at now. Blocking (JGit): call it on a
   * worker thread.
   *
   * @throws InstructionsFileException when the file is not a regular file, is larger than {@link
   *     #MAX_BYTES} or is not UTF-8 text
   */
  public static RepositoryInstructions of(Repository repository) throws IOException {
    DefaultBranch branch = DefaultBranch.of(repository);
    if (branch.tip() == null) {
      return NONE;
    }
    try (RevWalk walk = new RevWalk(repository);
        ObjectReader reader = repository.newObjectReader();
        TreeWalk file = TreeWalk.forPath(reader, PATH, walk.parseCommit(branch.tip()).getTree())) {
      if (file == null) {
        return NONE;
      }
      ObjectId id = file.getObjectId(0);
      return new RepositoryInstructions(id.name(), text(reader, file.getFileMode(0), id));
    }
  }

  private static String text(ObjectReader reader, FileMode mode, ObjectId id) throws IOException {
    // A symlink's blob is only its target's name; following it could leave the default branch's
    // tree.
    if (mode != FileMode.REGULAR_FILE && mode != FileMode.EXECUTABLE_FILE) {
      throw new InstructionsFileException("must be a regular file (a symlink is not followed)");
    }
    // The size is checked before the blob is loaded: the file comes from a push and could be large.
    if (reader.getObjectSize(id, Constants.OBJ_BLOB) > MAX_BYTES) {
      throw new InstructionsFileException(
          "is larger than " + MAX_BYTES / 1024 + " KiB; shorten it to run the built-in agent");
    }
    byte[] bytes = reader.open(id, Constants.OBJ_BLOB).getCachedBytes(MAX_BYTES);
    try {
      return utf8(bytes);
    } catch (CharacterCodingException e) {
      throw new InstructionsFileException("is not UTF-8 text");
    }
  }

  /**
   * {@code bytes} as UTF-8 text; a file of the repository that is not UTF-8 is refused, not mended.
   */
  static String utf8(byte[] bytes) throws CharacterCodingException {
    return StandardCharsets.UTF_8
        .newDecoder()
        .onMalformedInput(CodingErrorAction.REPORT)
        .onUnmappableCharacter(CodingErrorAction.REPORT)
        .decode(ByteBuffer.wrap(bytes))
        .toString();
  }
}
