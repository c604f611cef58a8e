package ai.spboucher.spbgit.common;

/** Why a {@link DetachedJws} did not verify; the message says it for a log line. */
public final class InvalidSignatureException extends Exception {

  /** What was wrong, for callers that act on it (an unknown key may be a rotation). */
  public enum Problem {
    /** No signature at all. */
    MISSING,
    /** Not a detached compact JWS, or a header that is not the expected JSON. */
    MALFORMED,
    /** An algorithm other than ES256, or header parameters this reader does not support. */
    ALGORITHM,
    /** Signed for another kind of message ({@code typ}). */
    TYPE,
    /** Signed with a key ({@code kid}) the reader does not have. */
    UNKNOWN_KEY,
    /** The signature is not the key's over these bytes: forged, or the bytes were altered. */
    MISMATCH
  }

  private final Problem problem;

  public InvalidSignatureException(Problem problem, String message) {
    super(message);
    this.problem = problem;
  }

  public Problem problem() {
    return problem;
  }
}
