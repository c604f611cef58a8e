package ai.spboucher.spbgit.runner.model;

import ai.spboucher.spbgit.runner.sockets.Refusal;
import com.fasterxml.jackson.databind.JsonNode;
import io.vertx.core.http.HttpClosedException;
import java.io.IOException;
import java.util.concurrent.TimeoutException;

/**
 * How a call's failure at the provider is told to the agent and to the record: the endpoint's own
 * refusal when no answer came, the text of an error event when the answer broke off, and the
 * record's error for an answer that was not a success. Stateless.
 */
final class ProviderFailures {

  private ProviderFailures() {}

  /**
   * The refusal for a call that never got an answer head: the agent left, the provider stayed
   * silent past {@code SPB_MODEL_TIMEOUT}, closed the connection after the call was sent, or could
   * not be reached.
   */
  static Refusal beforeAnswer(
      Throwable cause, boolean abandoned, boolean sent, long timeoutSeconds) {
    if (abandoned) {
      return new Refusal(
          499,
          "agent_disconnected",
          "the agent closed its connection before the provider answered");
    }
    if (cause instanceof TimeoutException) {
      return new Refusal(
          504,
          "upstream_timeout",
          "the provider did not answer within " + timeoutSeconds + " s (SPB_MODEL_TIMEOUT)");
    }
    if (sent && cause instanceof HttpClosedException) {
      // Reached, sent the call, then closed without an answer: not unreachable.
      return new Refusal(
          502, "upstream_dropped", "the provider closed the connection before answering");
    }
    return new Refusal(
        502,
        "upstream_unreachable",
        "cannot reach the provider: " + cause.getClass().getSimpleName());
  }

  /** Why an answer under way broke off: the provider went {@code silent}, or dropped it. */
  static String duringAnswer(boolean silent, long timeoutSeconds) {
    return silent
        ? "the provider sent nothing for " + timeoutSeconds + " s (SPB_MODEL_TIMEOUT)"
        : "the provider dropped the connection during its answer";
  }

  /**
   * The record's error for an answer of {@code status}: null for a success, else the status and the
   * API's error type or code when the {@code answered} body (null for a stream) names one.
   */
  static String errorOf(int status, byte[] answered) {
    if (status / 100 == 2) {
      return null;
    }
    String kind = "";
    if (answered != null) {
      try {
        JsonNode error = ModelEndpoint.JSON.readTree(answered).path("error");
        JsonNode type = error.path("type").isTextual() ? error.path("type") : error.path("code");
        kind = type.isTextual() ? " (" + type.asText() + ")" : "";
      } catch (IOException | RuntimeException e) {
        // Not JSON: the status says enough.
      }
    }
    return "provider answered " + status + kind;
  }
}
