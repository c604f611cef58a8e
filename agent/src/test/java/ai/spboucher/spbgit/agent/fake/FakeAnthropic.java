package ai.spboucher.spbgit.agent.fake;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A fake Anthropic Messages server ({@code POST /v1/messages}) answering with the real response
 * shape: {@code content} blocks of type {@code text} and {@code tool_use}, {@code stop_reason}, and
 * a {@code usage} block; errors as {@code {"type":"error","error":{"type":...,"message":...}}}.
 */
public final class FakeAnthropic extends FakeProvider {
  private final AtomicInteger ids = new AtomicInteger();

  public FakeAnthropic() {
    super("/v1/messages");
  }

  /** A tool_use block; {@code input} is serialised with Jackson (a Map, a record, a JsonNode). */
  public record Use(String name, Object input) {}

  public static Use use(String name, Object input) {
    return new Use(name, input);
  }

  public Reply toolUses(String text, Use... uses) {
    return reply(text, "tool_use", uses);
  }

  public Reply toolUse(String name, Object input) {
    return toolUses(null, use(name, input));
  }

  public Reply text(String text) {
    return reply(text, "end_turn");
  }

  public Reply truncated(String text, Use... uses) {
    return reply(text, "max_tokens", uses);
  }

  public Reply reply(String text, String stopReason, Use... uses) {
    ObjectNode body =
        JSON.createObjectNode()
            .put("id", "msg_fake" + ids.incrementAndGet())
            .put("type", "message")
            .put("role", "assistant")
            .put("model", "fake-model");
    ArrayNode content = body.putArray("content");
    if (text != null) {
      content.addObject().put("type", "text").put("text", text);
    }
    for (Use use : uses) {
      content
          .addObject()
          .put("type", "tool_use")
          .put("id", "toolu_" + ids.incrementAndGet())
          .put("name", use.name())
          .set("input", JSON.valueToTree(use.input()));
    }
    body.put("stop_reason", stopReason).putNull("stop_sequence");
    body.putObject("usage").put("input_tokens", 120).put("output_tokens", 30);
    return json(200, body);
  }

  @Override
  public Reply error(int status, String type, String message) {
    ObjectNode body = JSON.createObjectNode().put("type", "error");
    body.putObject("error").put("type", type).put("message", message);
    return json(status, body);
  }

  @Override
  protected String rateLimitType() {
    return "rate_limit_error";
  }
}
