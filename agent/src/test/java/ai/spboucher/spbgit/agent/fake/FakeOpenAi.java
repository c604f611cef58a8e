package ai.spboucher.spbgit.agent.fake;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A fake OpenAI-compatible Chat Completions server ({@code POST /v1/chat/completions}) answering
 * with the real response shape: {@code choices[0].message} with {@code content} and {@code
 * tool_calls}, {@code finish_reason}, and a {@code usage} block.
 */
public final class FakeOpenAi extends FakeProvider {
  private final AtomicInteger ids = new AtomicInteger();

  public FakeOpenAi() {
    super("/v1/chat/completions");
  }

  /** A tool call; {@code arguments} is the raw JSON text the model wrote (it may be invalid). */
  public record Call(String name, String arguments) {}

  public static Call call(String name, Object arguments) {
    return new Call(
        name, arguments instanceof String raw ? raw : JSON.valueToTree(arguments).toString());
  }

  /** One reply calling the given tools (in parallel). */
  public Reply toolCalls(Call... calls) {
    return reply(null, "tool_calls", calls);
  }

  public Reply toolCall(String name, Object arguments) {
    return toolCalls(call(name, arguments));
  }

  /** A reply with text only. */
  public Reply text(String content) {
    return reply(content, "stop");
  }

  /** A reply cut off at the token limit. */
  public Reply truncated(String content, Call... calls) {
    return reply(content, "length", calls);
  }

  public Reply reply(String content, String finishReason, Call... calls) {
    ObjectNode body =
        JSON.createObjectNode()
            .put("id", "chatcmpl-fake" + ids.incrementAndGet())
            .put("object", "chat.completion")
            .put("created", 1_700_000_000L)
            .put("model", "fake-model");
    ObjectNode choice = body.putArray("choices").addObject().put("index", 0);
    ObjectNode message = choice.putObject("message").put("role", "assistant");
    if (content == null) {
      message.putNull("content");
    } else {
      message.put("content", content);
    }
    if (calls.length > 0) {
      ArrayNode toolCalls = message.putArray("tool_calls");
      for (Call call : calls) {
        toolCalls
            .addObject()
            .put("id", "call_" + ids.incrementAndGet())
            .put("type", "function")
            .putObject("function")
            .put("name", call.name())
            .put("arguments", call.arguments());
      }
    }
    choice.put("finish_reason", finishReason);
    body.putObject("usage")
        .put("prompt_tokens", 120)
        .put("completion_tokens", 30)
        .put("total_tokens", 150);
    return json(200, body);
  }

  @Override
  public Reply error(int status, String type, String message) {
    ObjectNode body = JSON.createObjectNode();
    body.putObject("error")
        .put("message", message)
        .put("type", type)
        .putNull("param")
        .putNull("code");
    return json(status, body);
  }

  @Override
  protected String rateLimitType() {
    return "requests";
  }
}
