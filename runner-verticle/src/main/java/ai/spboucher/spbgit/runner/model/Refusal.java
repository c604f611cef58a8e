package ai.spboucher.spbgit.runner.model;

/** An answer the model endpoint gives itself, without the provider: {@code {"error":{"type","message"}}}. */
final class Refusal extends Exception {

  private final int status;
  private final String type;

  Refusal(int status, String type, String message) {
    super(message, null, false, false);
    this.status = status;
    this.type = type;
  }

  static Refusal badRequest(String message) {
    return new Refusal(400, "invalid_request_error", message);
  }

  int status() {
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
