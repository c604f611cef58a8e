package ai.spboucher.spbgit.gateway.repos;

import ai.spboucher.spbgit.gateway.errors.RequestException;
import java.util.regex.Pattern;

/**
 * A validated repository name: safe as a single path segment and in a URL. A name outside the rules
 * is a {@link RequestException.Invalid}.
 */
public record RepoName(String value) {

  private static final Pattern VALID = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,99}");

  public RepoName {
    if (value == null
        || !VALID.matcher(value).matches()
        || value.contains("..")
        || value.endsWith(".git")
        || value.endsWith(".lock")) {
      throw new RequestException.Invalid(
          "invalid repository name"
              + (value == null ? "" : " '" + printable(value) + "'")
              + ": use 1-100 of A-Z a-z 0-9 . _ -, starting with a letter or digit, without '..' or a .git/.lock suffix");
    }
  }

  public static RepoName of(String value) {
    return new RepoName(value);
  }

  /** The refusal of a name that does not exist: repository not found (404). */
  public RequestException.NotFound notFound() {
    return new RequestException.NotFound("repository not found: " + value);
  }

  @Override
  public String toString() {
    return value;
  }

  private static String printable(String name) {
    String shown = name.length() > 120 ? name.substring(0, 120) + "..." : name;
    return shown.replaceAll("\\p{Cntrl}", "?");
  }
}
