package ai.spboucher.spbgit.testsupport;

import ai.spboucher.spbgit.testsupport.FakeProvider.Received;
import ai.spboucher.spbgit.testsupport.FakeProvider.Reply;
import ai.spboucher.spbgit.testsupport.FakeProvider.Usage;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * How one provider API writes a {@link ScriptedTurn}: as one JSON body, or as the server-sent
 * events that API streams (one flush per event). One subclass per API, so that a change to one
 * API's shape is one file.
 *
 * <p>Threading: called on the provider's request threads; the ids come from the provider's one
 * counter, so every id of a run is distinct across APIs.
 */
abstract class WireFormat {

  static final ObjectMapper JSON = FakeProvider.JSON;

  /** The provider's id counter: item, call and response ids, and the request id header. */
  final AtomicInteger ids;

  private final String requestIdHeader;

  WireFormat(AtomicInteger ids, String requestIdHeader) {
    this.ids = ids;
    this.requestIdHeader = requestIdHeader;
  }

  /** The turn as one non-streamed response body. */
  abstract Reply body(Received request, ScriptedTurn turn);

  /** The turn as this API's stream of events. */
  abstract Reply events(Received request, ScriptedTurn turn);

  /** A 200 with {@code body} and the request id header, reporting {@code usage}. */
  final Reply complete(ObjectNode body, Usage usage) {
    return new Reply(200, requestId(), body.toString(), 0, null, 0, -1, usage);
  }

  /** A stream of {@code events} with the request id header, reporting {@code usage}. */
  final Reply streamed(List<String> events, Usage usage) {
    return Reply.streamed(requestId(), events, usage);
  }

  private Map<String, String> requestId() {
    return Map.of(requestIdHeader, "req_" + ids.get());
  }

  /** Cuts a string into about three pieces, as providers split text and arguments across deltas. */
  static List<String> pieces(String whole) {
    List<String> pieces = new ArrayList<>();
    int size = Math.max(1, (whole.length() + 2) / 3);
    for (int from = 0; from < whole.length(); from += size) {
      pieces.add(whole.substring(from, Math.min(whole.length(), from + size)));
    }
    if (pieces.isEmpty()) {
      pieces.add("");
    }
    return pieces;
  }

  /** The model the request named, which every reply echoes. */
  static String model(Received request) {
    return request.json().path("model").asText();
  }
}
