package ai.spboucher.spbgit.testsupport;

import ai.spboucher.spbgit.testsupport.FakeProvider.Call;
import ai.spboucher.spbgit.testsupport.FakeProvider.Received;
import ai.spboucher.spbgit.testsupport.FakeProvider.Reply;
import ai.spboucher.spbgit.testsupport.FakeProvider.Usage;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A scripted turn as OpenAI Chat Completions writes it: one {@code chat.completion} body, or {@code
 * data:} chunks with {@code tool_calls} deltas and, when {@code stream_options.include_usage} is
 * set, a final usage chunk; and that API's error and rate-limit replies.
 *
 * <p>Threading: as {@link FakeProvider}: called on the provider's request threads; ids come from
 * the provider's one counter.
 */
final class ChatCompletionsFormat extends WireFormat {

  ChatCompletionsFormat(AtomicInteger ids) {
    super(ids, "x-request-id");
  }

  @Override
  Reply body(Received request, ScriptedTurn turn) {
    ObjectNode message = JSON.createObjectNode().put("role", "assistant");
    message.put("content", turn.text()).putNull("refusal");
    if (turn.callsTool()) {
      ArrayNode toolCalls = message.putArray("tool_calls");
      for (Call call : turn.calls()) {
        toolCalls
            .addObject()
            .put("id", "call_" + ids.incrementAndGet())
            .put("type", "function")
            .putObject("function")
            .put("name", call.name())
            .put("arguments", call.arguments());
      }
    }
    ObjectNode body = openAiEnvelope(request, "chat.completion");
    ObjectNode choice = body.putArray("choices").addObject().put("index", 0);
    choice.set("message", message);
    choice.putNull("logprobs");
    choice.put("finish_reason", openAiFinishReason(turn));
    body.set("usage", openAiUsage(turn.usage()));
    body.put("service_tier", "default").put("system_fingerprint", "fp_fake");
    return complete(body, turn.usage());
  }

  @Override
  Reply events(Received request, ScriptedTurn turn) {
    String id = "chatcmpl-" + ids.incrementAndGet();
    boolean includeUsage =
        request.json().path("stream_options").path("include_usage").asBoolean(false);
    List<String> events = new ArrayList<>();
    // The role comes with the first delta: the text's, else the first call's header.
    ObjectNode first = JSON.createObjectNode().put("role", "assistant");
    if (turn.text() != null) {
      first.put("content", "").putNull("refusal");
      events.add(openAiChunk(request, id, first, null, includeUsage));
      first = null;
      for (String piece : pieces(turn.text())) {
        events.add(
            openAiChunk(
                request, id, JSON.createObjectNode().put("content", piece), null, includeUsage));
      }
    }
    for (int index = 0; index < turn.calls().size(); index++) {
      Call call = turn.calls().get(index);
      ObjectNode header = first != null ? first.putNull("content") : JSON.createObjectNode();
      first = null;
      header
          .putArray("tool_calls")
          .addObject()
          .put("index", index)
          .put("id", "call_" + ids.incrementAndGet())
          .put("type", "function")
          .putObject("function")
          .put("name", call.name())
          .put("arguments", "");
      events.add(openAiChunk(request, id, header, null, includeUsage));
      for (String piece : pieces(call.arguments())) {
        ObjectNode delta = JSON.createObjectNode();
        delta
            .putArray("tool_calls")
            .addObject()
            .put("index", index)
            .putObject("function")
            .put("arguments", piece);
        events.add(openAiChunk(request, id, delta, null, includeUsage));
      }
    }
    events.add(
        openAiChunk(request, id, JSON.createObjectNode(), openAiFinishReason(turn), includeUsage));
    if (includeUsage) {
      ObjectNode last = openAiEnvelope(request, "chat.completion.chunk").put("id", id);
      last.putArray("choices");
      last.set("usage", openAiUsage(turn.usage()));
      events.add("data: " + last + "\n\n");
    }
    events.add("data: [DONE]\n\n");
    // Without include_usage the stream carries no usage at all, as OpenAI's does.
    return streamed(events, includeUsage ? turn.usage() : Usage.NONE);
  }

  private static String openAiFinishReason(ScriptedTurn turn) {
    return turn.truncated() ? "length" : turn.callsTool() ? "tool_calls" : "stop";
  }

  private String openAiChunk(
      Received request, String id, ObjectNode delta, String finishReason, boolean includeUsage) {
    ObjectNode chunk = openAiEnvelope(request, "chat.completion.chunk").put("id", id);
    ObjectNode choice = chunk.putArray("choices").addObject().put("index", 0);
    choice.set("delta", delta);
    choice.putNull("logprobs");
    if (finishReason == null) {
      choice.putNull("finish_reason");
    } else {
      choice.put("finish_reason", finishReason);
    }
    if (includeUsage) {
      chunk.putNull("usage");
    }
    return "data: " + chunk + "\n\n";
  }

  private ObjectNode openAiEnvelope(Received request, String object) {
    return JSON.createObjectNode()
        .put("id", "chatcmpl-" + ids.incrementAndGet())
        .put("object", object)
        .put("created", System.currentTimeMillis() / 1000)
        .put("model", model(request))
        .put("system_fingerprint", "fp_fake");
  }

  private static ObjectNode openAiUsage(Usage usage) {
    ObjectNode node =
        JSON.createObjectNode()
            .put("prompt_tokens", usage.inputTokens())
            .put("completion_tokens", usage.outputTokens())
            .put("total_tokens", usage.inputTokens() + usage.outputTokens());
    node.putObject("prompt_tokens_details")
        .put("cached_tokens", usage.cacheReadTokens())
        .put("audio_tokens", 0);
    node.putObject("completion_tokens_details")
        .put("reasoning_tokens", 0)
        .put("audio_tokens", 0)
        .put("accepted_prediction_tokens", 0)
        .put("rejected_prediction_tokens", 0);
    return node;
  }

  /** An OpenAI error body: {@code {"error":{"message","type","param","code"}}}. */
  static Reply error(int status, String type, String code, String message) {
    ObjectNode body = JSON.createObjectNode();
    ObjectNode error =
        body.putObject("error").put("message", message).put("type", type).putNull("param");
    if (code == null) {
      error.putNull("code");
    } else {
      error.put("code", code);
    }
    return new Reply(status, Map.of(), body.toString(), 0);
  }

  /** OpenAI's 429 with its rate-limit headers. */
  static Reply rateLimited(int retryAfterSeconds) {
    Reply error =
        error(
            429,
            "requests",
            "rate_limit_exceeded",
            "Rate limit reached, please retry in " + retryAfterSeconds + "s.");
    return new Reply(
        429,
        Map.of(
            "retry-after",
            String.valueOf(retryAfterSeconds),
            "x-ratelimit-limit-requests",
            "500",
            "x-ratelimit-remaining-requests",
            "0",
            "x-ratelimit-reset-requests",
            retryAfterSeconds + "s"),
        error.body(),
        0);
  }
}
