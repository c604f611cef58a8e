package ai.spboucher.spbgit.gateway.environment;

import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.nio.charset.CharacterCodingException;
import org.eclipse.jgit.lib.Constants;
import org.eclipse.jgit.lib.FileMode;
import org.eclipse.jgit.lib.ObjectId;
import org.eclipse.jgit.lib.ObjectReader;
import org.eclipse.jgit.lib.Repository;
import org.eclipse.jgit.revwalk.RevCommit;
import org.eclipse.jgit.revwalk.RevWalk;
import org.eclipse.jgit.treewalk.TreeWalk;

/**
 * What {@code .spbgit/agent.yml} on a repository's default branch says: the environment, or why the
 * file cannot be used. The default branch is the one {@code HEAD} names, never a job's base or a
 * proposal: a job cannot widen its own environment, only an owner's push or approval onto the
 * default branch can.
 *
 * @param branch the default branch's short name (e.g. {@code main}), or null when {@code HEAD}
 *     names none
 * @param blob the file's blob id, or null when the branch has no such file
 * @param environment the parsed environment ({@link AgentEnvironment#NONE} without a file); null
 *     when {@code error}
 * @param error why the file cannot be used, or null
 */
public record EnvironmentReading(
    String branch, String blob, AgentEnvironment environment, EnvironmentFileException error) {

  /**
   * Reads the file from the commit the default branch points at now. Blocking (JGit): call it on a
   * worker thread.
   */
  public static EnvironmentReading of(Repository repository) throws IOException {
    DefaultBranch defaultBranch = DefaultBranch.of(repository);
    String branch = defaultBranch.name();
    if (defaultBranch.tip() == null) {
      return new EnvironmentReading(branch, null, AgentEnvironment.NONE, null);
    }
    try (RevWalk walk = new RevWalk(repository);
        ObjectReader reader = repository.newObjectReader()) {
      RevCommit commit = walk.parseCommit(defaultBranch.tip());
      try (TreeWalk file = TreeWalk.forPath(reader, EnvironmentFile.PATH, commit.getTree())) {
        if (file == null) {
          return new EnvironmentReading(branch, null, AgentEnvironment.NONE, null);
        }
        ObjectId id = file.getObjectId(0);
        try {
          return new EnvironmentReading(
              branch, id.name(), parse(reader, file.getFileMode(0), id), null);
        } catch (EnvironmentFileException e) {
          return new EnvironmentReading(branch, id.name(), null, e);
        }
      }
    }
  }

  private static AgentEnvironment parse(ObjectReader reader, FileMode mode, ObjectId id)
      throws IOException {
    // A symlink's blob is its target's name and a directory or submodule has no text: none is an
    // environment.
    if (mode != FileMode.REGULAR_FILE && mode != FileMode.EXECUTABLE_FILE) {
      throw new EnvironmentFileException(null, 0, "must be a regular file");
    }
    // The size is checked before the blob is loaded: the file comes from a push and could be large.
    if (reader.getObjectSize(id, Constants.OBJ_BLOB) > EnvironmentFile.MAX_BYTES) {
      throw new EnvironmentFileException(
          null, 0, "is larger than " + EnvironmentFile.MAX_BYTES / 1024 + " KiB");
    }
    byte[] bytes = reader.open(id, Constants.OBJ_BLOB).getCachedBytes(EnvironmentFile.MAX_BYTES);
    try {
      return EnvironmentFile.parse(RepositoryInstructions.utf8(bytes), id.name());
    } catch (CharacterCodingException e) {
      throw new EnvironmentFileException(null, 0, "is not UTF-8 text");
    }
  }

  /**
   * The environment a new job gets.
   *
   * @throws EnvironmentFileException when the file cannot be used
   */
  public AgentEnvironment require() {
    if (error != null) {
      throw error;
    }
    return environment;
  }

  /**
   * The API form: where the file was read from, and its environment or its error with the line and
   * key at fault.
   */
  public JsonObject toJson() {
    JsonObject json =
        new JsonObject().put("path", EnvironmentFile.PATH).put("branch", branch).put("blob", blob);
    return error == null
        ? json.put("environment", environment.toJson())
        : json.put("error", error.getMessage()).put("line", error.line()).put("key", error.key());
  }
}
