package ai.spboucher.spbgit.testsupport;

import ai.spboucher.spbgit.testsupport.FakeProvider.Call;
import ai.spboucher.spbgit.testsupport.FakeProvider.Received;
import ai.spboucher.spbgit.testsupport.FakeProvider.Reply;
import ai.spboucher.spbgit.testsupport.FakeProvider.Usage;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A scripted turn as Anthropic Messages writes it: one {@code message} body, or {@code
 * message_start} (input usage) to {@code message_delta} (output usage) and {@code message_stop};
 * and that API's error and rate-limit replies.
 *
 * <p>Threading: as {@link FakeProvider}: called on the provider's request threads; ids come from
 * the provider's one counter.
 */
final class MessagesFormat extends WireFormat {

  MessagesFormat(AtomicInteger ids) {
    super(ids, "request-id");
  }

  /**
   * A text block (a turn that only calls tools says which first, as Claude's replies do), then a
   * tool_use block per call.
   */
  private ArrayNode anthropicContent(ScriptedTurn turn) {
    ArrayNode content = JSON.createArrayNode();
    String text = turn.text();
    if (text == null) {
      text = turn.callsTool() ? "Let me use " + turn.calls().get(0).name() + "." : "";
    }
    content.addObject().put("type", "text").put("text", text);
    for (Call call : turn.calls()) {
      try {
        content
            .addObject()
            .put("type", "tool_use")
            .put("id", "toolu_" + ids.incrementAndGet())
            .put("name", call.name())
            .set("input", JSON.readTree(call.arguments()));
      } catch (IOException e) {
        throw new IllegalArgumentException(e);
      }
    }
    return content;
  }

  private static String anthropicStopReason(ScriptedTurn turn) {
    return turn.truncated() ? "max_tokens" : turn.callsTool() ? "tool_use" : "end_turn";
  }

  private ObjectNode anthropicEnvelope(Received request, String id) {
    return JSON.createObjectNode()
        .put("id", id)
        .put("type", "message")
        .put("role", "assistant")
        .put("model", model(request));
  }

  private static ObjectNode anthropicUsage(Usage usage, long outputTokens) {
    return JSON.createObjectNode()
        .put("input_tokens", usage.inputTokens())
        .put("cache_creation_input_tokens", 0)
        .put("cache_read_input_tokens", usage.cacheReadTokens())
        .put("output_tokens", outputTokens);
  }

  @Override
  Reply body(Received request, ScriptedTurn turn) {
    ObjectNode body = anthropicEnvelope(request, "msg_" + ids.incrementAndGet());
    body.set("content", anthropicContent(turn));
    body.put("stop_reason", anthropicStopReason(turn)).putNull("stop_sequence");
    body.set("usage", anthropicUsage(turn.usage(), turn.usage().outputTokens()));
    return complete(body, turn.usage());
  }

  @Override
  Reply events(Received request, ScriptedTurn turn) {
    ObjectNode message = anthropicEnvelope(request, "msg_" + ids.incrementAndGet());
    message.putArray("content");
    message.putNull("stop_reason").putNull("stop_sequence");
    // message_start reports the input and a first output token; message_delta the output total.
    message.set("usage", anthropicUsage(turn.usage(), 1));
    List<String> events = new ArrayList<>();
    events.add(anthropicEvent("message_start", JSON.createObjectNode().set("message", message)));
    events.add(anthropicEvent("ping", JSON.createObjectNode()));
    ArrayNode content = anthropicContent(turn);
    for (int index = 0; index < content.size(); index++) {
      ObjectNode block = (ObjectNode) content.get(index);
      boolean toolUse = block.path("type").asText().equals("tool_use");
      ObjectNode start = block.deepCopy();
      if (toolUse) {
        start.putObject("input");
      } else {
        start.put("text", "");
      }
      events.add(
          anthropicEvent(
              "content_block_start",
              JSON.createObjectNode().put("index", index).set("content_block", start)));
      String whole = toolUse ? block.path("input").toString() : block.path("text").asText();
      for (String piece : pieces(whole)) {
        ObjectNode delta =
            toolUse
                ? JSON.createObjectNode().put("type", "input_json_delta").put("partial_json", piece)
                : JSON.createObjectNode().put("type", "text_delta").put("text", piece);
        events.add(
            anthropicEvent(
                "content_block_delta",
                JSON.createObjectNode().put("index", index).set("delta", delta)));
      }
      events.add(anthropicEvent("content_block_stop", JSON.createObjectNode().put("index", index)));
    }
    ObjectNode delta =
        JSON.createObjectNode()
            .put("stop_reason", anthropicStopReason(turn))
            .putNull("stop_sequence");
    ObjectNode messageDelta = JSON.createObjectNode();
    messageDelta.set("delta", delta);
    messageDelta.putObject("usage").put("output_tokens", turn.usage().outputTokens());
    events.add(anthropicEvent("message_delta", messageDelta));
    events.add(anthropicEvent("message_stop", JSON.createObjectNode()));
    return streamed(events, turn.usage());
  }

  private static String anthropicEvent(String type, ObjectNode data) {
    ObjectNode node = JSON.createObjectNode().put("type", type);
    node.setAll(data);
    return "event: " + type + "\ndata: " + node + "\n\n";
  }

  /** An Anthropic error body: {@code {"type":"error","error":{"type","message"}}}. */
  static Reply error(int status, String type, String message) {
    ObjectNode body = JSON.createObjectNode().put("type", "error");
    body.putObject("error").put("type", type).put("message", message);
    return new Reply(status, Map.of("request-id", "req_err"), body.toString(), 0);
  }

  /** Anthropic's 429 with {@code retry-after}. */
  static Reply rateLimited(int retryAfterSeconds) {
    Reply error =
        error(
            429,
            "rate_limit_error",
            "Number of request tokens has exceeded your per-minute " + "rate limit");
    return new Reply(
        429,
        Map.of(
            "retry-after",
            String.valueOf(retryAfterSeconds),
            "anthropic-ratelimit-requests-remaining",
            "0",
            "request-id",
            "req_rl"),
        error.body(),
        0);
  }
}
