package ai.spboucher.spbgit.runner.sockets;

/**
 * An answer one of a job's sockets (the egress proxy, the model endpoint, the git relay) gives
 * itself instead of forwarding the request: a status, a machine-readable type and a one-line
 * message. The egress proxy and the git relay answer it as plain text (what curl and git show the
 * job), the model endpoint as {@code {"error":{"type","message"}}}.
 */
public final class Refusal extends Exception {

  private static final long serialVersionUID = 1L;

  private final int status;
  private final String type;

  public Refusal(int status, String type, String message) {
    super(message, null, false, false);
    this.status = status;
    this.type = type;
  }

  public static Refusal badRequest(String message) {
    return new Refusal(400, "invalid_request_error", message);
  }

  public int status() {
    return status;
  }

  public String type() {
    return type;
  }

  /** {@code type: message}, as records and logs show it. */
  public String describe() {
    return type + ": " + getMessage();
  }
}
