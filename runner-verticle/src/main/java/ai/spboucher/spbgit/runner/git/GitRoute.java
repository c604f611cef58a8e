package ai.spboucher.spbgit.runner.git;

import java.util.Set;

/**
 * Which requests the {@link GitRelay} forwards: the smart-HTTP requests of the job's one
 * repository, matched exactly (no decoding, no normalising), and nothing else. Plain Java, no I/O.
 */
final class GitRoute {

  private static final Set<String> SERVICES = Set.of("git-upload-pack", "git-receive-pack");

  private final String repoPath;

  /**
   * @param repoPath the path of the repository's clone URL, such as {@code /owner/name.git}
   */
  GitRoute(String repoPath) {
    if (repoPath == null || !repoPath.startsWith("/") || repoPath.endsWith("/")) {
      throw new IllegalArgumentException(
          "repository path must start and must not end with /: " + repoPath);
    }
    this.repoPath = repoPath;
  }

  String repoPath() {
    return repoPath;
  }

  /**
   * Whether the request is one of: {@code GET
   * <repo>/info/refs?service=git-upload-pack|git-receive-pack}, {@code POST
   * <repo>/git-upload-pack}, {@code POST <repo>/git-receive-pack}.
   *
   * @param query the request target's query, or null when it has none
   */
  boolean admits(String method, String path, String query) {
    if (!path.startsWith(repoPath + "/")) {
      return false;
    }
    String rest = path.substring(repoPath.length() + 1);
    if (method.equals("GET")) {
      return rest.equals("info/refs")
          && query != null
          && query.startsWith("service=")
          && SERVICES.contains(query.substring("service=".length()));
    }
    return method.equals("POST") && query == null && SERVICES.contains(rest);
  }
}
