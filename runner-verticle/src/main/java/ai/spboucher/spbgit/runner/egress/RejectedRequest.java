package ai.spboucher.spbgit.runner.egress;

import ai.spboucher.spbgit.runner.sockets.PlainAnswer;

/** A request the proxy answers itself, with {@link #status()} and a one-line plain-text body, then closes. */
final class RejectedRequest extends Exception {

  private final int status;

  RejectedRequest(int status, String message) {
    super(message, null, false, false);
    this.status = status;
  }

  int status() {
    return status;
  }

  /** The complete response: status line, a few headers, the message as body; the connection closes after it. */
  byte[] response() {
    return response(status, getMessage());
  }

  static byte[] response(int status, String message) {
    return PlainAnswer.of(status, message);
  }
}
