package ai.spboucher.spbgit.gateway.git;

import java.time.Duration;

/**
 * A push was stopped by one of its bounds: a limit it went past, its client gone or its token
 * revoked. The message names the bound and, for a configured limit, its setting; git clients show
 * it as the unpack error.
 *
 * <p>Unchecked because it is thrown from inside JGit's object checker, whose methods may only throw
 * {@code CorruptObjectException}, which JGit rewords as "invalid object"; ReceivePack reports any
 * runtime exception from unpacking with its own message.
 */
final class PushLimitException extends RuntimeException {

  private static final long serialVersionUID = 1L;

  private final boolean clientGone;

  private PushLimitException(String message, boolean clientGone) {
    super(message);
    this.clientGone = clientGone;
  }

  static PushLimitException inflatedSize(long limit) {
    return new PushLimitException(
        "push exceeds the inflated size limit of "
            + bytes(limit)
            + " (SPB_MAX_PUSH_INFLATED_BYTES)",
        false);
  }

  static PushLimitException deltaDepth(int limit) {
    return new PushLimitException(
        "push has a delta chain deeper than the limit of " + limit + " (SPB_MAX_DELTA_DEPTH)",
        false);
  }

  static PushLimitException timeLimit(Duration limit) {
    long s = limit.toSeconds();
    return new PushLimitException(
        "push exceeds the time limit of "
            + (s % 60 == 0 ? s / 60 + " min" : s + " s")
            + " (SPB_PUSH_TIME_LIMIT)",
        false);
  }

  static PushLimitException tokenRevoked() {
    return new PushLimitException("push stopped: its job token was revoked", false);
  }

  static PushLimitException clientDisconnected() {
    return new PushLimitException("push stopped: the client disconnected", true);
  }

  /** Whether nobody is left to answer. */
  boolean clientGone() {
    return clientGone;
  }

  private static String bytes(long n) {
    if (n % (1L << 30) == 0) {
      return n / (1L << 30) + " GiB";
    }
    if (n % (1L << 20) == 0) {
      return n / (1L << 20) + " MiB";
    }
    return n % (1L << 10) == 0 ? n / (1L << 10) + " KiB" : n + " bytes";
  }
}
