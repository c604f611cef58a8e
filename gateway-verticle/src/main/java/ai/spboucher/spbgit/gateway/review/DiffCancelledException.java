package ai.spboucher.spbgit.gateway.review;

/** A diff computation stopped because every client waiting for it went away; nothing was cached. */
public final class DiffCancelledException extends RuntimeException {

  DiffCancelledException() {
    super("the diff was cancelled: every client waiting for it went away", null, false, false);
  }
}
