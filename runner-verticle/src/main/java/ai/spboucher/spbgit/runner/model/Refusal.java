package ai.spboucher.spbgit.runner.model;

/**
 * An answer an endpoint of the runner gives itself instead of forwarding the request: for the model endpoint
 * {@code {"error":{"type","message"}}}; the git relay answers it as plain text.
 */
public final class Refusal extends Exception {

  private final int status;
  private final String type;

  public Refusal(int status, String type, String message) {
    super(message, null, false, false);
    this.status = status;
    this.type = type;
  }

  static Refusal badRequest(String message) {
    return new Refusal(400, "invalid_request_error", message);
  }

  public int status() {
    return status;
  }

  String type() {
    return type;
  }

  /** What the agent reads: {@code type: message}. */
  String describe() {
    return type + ": " + getMessage();
  }
}
