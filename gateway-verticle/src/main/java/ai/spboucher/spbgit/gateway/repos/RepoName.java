package ai.spboucher.spbgit.gateway.repos;

import java.util.regex.Pattern;

/** A validated repository name: safe as a single path segment and in a URL. */
public record RepoName(String value) {

  private static final Pattern VALID = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,99}");

  public RepoName {
    if (value == null
        || !VALID.matcher(value).matches()
        || value.contains("..")
        || value.endsWith(".git")
        || value.endsWith(".lock")) {
      throw new InvalidRepoNameException(value);
    }
  }

  public static RepoName of(String value) {
    return new RepoName(value);
  }

  @Override
  public String toString() {
    return value;
  }
}
