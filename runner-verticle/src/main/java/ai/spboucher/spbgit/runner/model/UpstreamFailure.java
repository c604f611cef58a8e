package ai.spboucher.spbgit.runner.model;

import ai.spboucher.spbgit.runner.sockets.Refusal;

/** The provider gave no answer the agent saw: the endpoint answers {@code refusal} instead. */
final class UpstreamFailure extends Exception {
  private static final long serialVersionUID = 1L;
  private final transient Refusal refusal;
  private final long bytesDown;
  private final transient Usage counted;

  UpstreamFailure(Refusal refusal, long bytesDown, Usage counted) {
    super(refusal.describe(), null, false, false);
    this.refusal = refusal;
    this.bytesDown = bytesDown;
    this.counted = counted;
  }

  /** What the meter counted for the call. */
  Usage counted() {
    return counted;
  }

  Refusal refusal() {
    return refusal;
  }

  long bytesDown() {
    return bytesDown;
  }
}
