package ai.spboucher.spbgit.runner.model;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.spboucher.spbgit.runner.sockets.Refusal;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.Map;

/** Runs request bodies through an API's positive list ({@link ModelApi#admit}) for the tests. */
final class RequestChecks {

  private RequestChecks() {}

  static ObjectNode body(String json) {
    try {
      return (ObjectNode) ModelEndpoint.JSON.readTree(json);
    } catch (Exception e) {
      throw new IllegalArgumentException("not a JSON object: " + json, e);
    }
  }

  /** Admits {@code json} whole: nothing refused, nothing changed. */
  static void assertAdmitted(ModelApi api, String json) {
    ObjectNode request = body(json);
    JsonNode before = request.deepCopy();
    try {
      api.admit(request);
    } catch (Refusal refusal) {
      throw new AssertionError(api + " refused " + json + ": " + refusal.getMessage(), refusal);
    }
    assertEquals(before, request, "an admitted request is forwarded as it came");
  }

  /**
   * Refuses {@code json} with 400 {@code feature_not_allowed}, the message starting with the path
   * of the field not admitted; returns the message.
   */
  static String assertRefused(ModelApi api, String json, String path) {
    Refusal refusal = assertThrows(Refusal.class, () -> api.admit(body(json)), json);
    assertEquals(400, refusal.status());
    assertEquals(Admitted.REFUSAL_TYPE, refusal.type());
    assertTrue(
        refusal.getMessage().startsWith(path + " "),
        "expected the refusal to name " + path + ": " + refusal.getMessage());
    return refusal.getMessage();
  }

  /** Every sample admitted, one request each, built by {@code wrap} from the sample's JSON. */
  static void assertEachAdmitted(
      ModelApi api, Map<String, String> samples, java.util.function.UnaryOperator<String> wrap) {
    samples.forEach((name, sample) -> assertAdmitted(api, wrap.apply(sample)));
  }
}
