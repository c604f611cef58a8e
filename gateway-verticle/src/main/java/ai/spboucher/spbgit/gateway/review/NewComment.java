package ai.spboucher.spbgit.gateway.review;

import ai.spboucher.spbgit.gateway.errors.RequestException;
import java.nio.charset.StandardCharsets;
import java.util.regex.Pattern;

/**
 * A review comment the owner writes on a job's proposal (or partial work): on one line of its diff
 * ({@code path}, {@code side}, {@code line}) or, without them, the summary comment. The text may
 * quote hostile code: it is kept as given and only ever shown as text.
 *
 * @param body the comment's text, at most {@link #MAX_BODY_BYTES} bytes of UTF-8
 * @param path the file as the diff names it ({@code path}), or null for the summary comment
 * @param side {@code new} or {@code old}: which side's numbering {@code line} is in
 * @param line the line number on that side, or null for the summary comment
 * @param commit the commit the owner saw, or null: when given it must still be the reviewed one
 */
public record NewComment(String body, String path, String side, Integer line, String commit) {

  /** 8 KiB: a page of review with a quoted hunk; longer belongs in a file of its own. */
  public static final int MAX_BODY_BYTES = 8 << 10;

  public static final int MAX_PATH_LENGTH = 4096;

  private static final Pattern COMMIT = Pattern.compile("[0-9a-f]{40}");

  /** Whether this is the summary comment rather than one on a line. */
  public boolean isSummary() {
    return path == null;
  }

  /**
   * Checks what can be checked without the diff.
   *
   * @throws RequestException.Invalid for an empty body or an incomplete or malformed place
   * @throws RequestException.TooLarge for a body over {@link #MAX_BODY_BYTES}
   */
  public void check() {
    if (body == null || body.isBlank()) {
      throw new RequestException.Invalid("'body' is required and must be a non-empty string");
    }
    int bytes = body.getBytes(StandardCharsets.UTF_8).length;
    if (bytes > MAX_BODY_BYTES) {
      throw new RequestException.TooLarge(
          "the comment is " + bytes + " bytes; at most " + MAX_BODY_BYTES + " are allowed");
    }
    if ((path == null) != (line == null)) {
      throw new RequestException.Invalid(
          "a comment on a line needs both 'path' and 'line'; the summary comment has neither");
    }
    if (path != null && (path.isEmpty() || path.length() > MAX_PATH_LENGTH)) {
      throw new RequestException.Invalid(
          "'path' must be a file of the diff (1 to " + MAX_PATH_LENGTH + " characters)");
    }
    if (line != null && line < 1) {
      throw new RequestException.Invalid("'line' must be a line number (1 or more)");
    }
    if (side != null && !side.equals("new") && !side.equals("old")) {
      throw new RequestException.Invalid("'side' must be 'new' or 'old'");
    }
    if (side != null && path == null) {
      throw new RequestException.Invalid(
          "'side' belongs to a comment on a line ('path' and 'line')");
    }
    if (commit != null && !COMMIT.matcher(commit).matches()) {
      throw new RequestException.Invalid(
          "'commit' must be a full commit id (40 lower-case hex digits)");
    }
  }

  /** The side {@code line} counts on: the new one unless the comment says otherwise. */
  public String sideOrDefault() {
    return side == null ? "new" : side;
  }
}
