package ai.spboucher.spbgit.testsupport;

import ai.spboucher.spbgit.testsupport.FakeProvider.Call;
import ai.spboucher.spbgit.testsupport.FakeProvider.Received;
import ai.spboucher.spbgit.testsupport.FakeProvider.Reply;
import ai.spboucher.spbgit.testsupport.FakeProvider.Usage;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/**
 * A scripted turn as OpenAI Responses writes it: one {@code response} object, or {@code response.*}
 * events ending in {@code response.completed} (or {@code response.incomplete}) with the usage.
 *
 * <p>Threading: as {@link FakeProvider}: called on the provider's request threads; ids come from
 * the provider's one counter.
 */
final class ResponsesFormat extends WireFormat {

  ResponsesFormat(AtomicInteger ids) {
    super(ids, "x-request-id");
  }

  /** One output item of a Responses turn: a message with {@code text}, or a function call. */
  private record Output(String itemId, String text, Call call) {}

  /** The turn's output items: its text as a message, then one function call per tool call. */
  private List<Output> responsesOutputs(ScriptedTurn turn) {
    List<Output> outputs = new ArrayList<>();
    if (turn.text() != null) {
      outputs.add(new Output("msg_" + ids.incrementAndGet(), turn.text(), null));
    }
    for (Call call : turn.calls()) {
      outputs.add(new Output("fc_" + ids.incrementAndGet(), null, call));
    }
    return outputs;
  }

  private static ObjectNode responsesItem(Output output, boolean done) {
    ObjectNode item = JSON.createObjectNode();
    if (output.call() != null) {
      item.put("type", "function_call")
          .put("id", output.itemId())
          .put("call_id", "call_" + output.itemId())
          .put("name", output.call().name())
          .put("arguments", done ? output.call().arguments() : "");
    } else {
      item.put("type", "message").put("id", output.itemId()).put("role", "assistant");
      ArrayNode content = item.putArray("content");
      if (done) {
        content
            .addObject()
            .put("type", "output_text")
            .put("text", output.text())
            .putArray("annotations");
      }
    }
    return item.put("status", done ? "completed" : "in_progress");
  }

  /** The response object; {@code outputs} and {@code turn} are null while it is in progress. */
  private ObjectNode responsesObject(
      Received request, String id, List<Output> outputs, ScriptedTurn turn) {
    String status = turn == null ? "in_progress" : turn.truncated() ? "incomplete" : "completed";
    ObjectNode response =
        JSON.createObjectNode()
            .put("id", id)
            .put("object", "response")
            .put("created_at", System.currentTimeMillis() / 1000)
            .put("status", status)
            .put("model", model(request));
    if (turn != null && turn.truncated()) {
      response.putObject("incomplete_details").put("reason", "max_output_tokens");
    }
    ArrayNode output = response.putArray("output");
    if (outputs != null) {
      outputs.forEach(item -> output.add(responsesItem(item, true)));
    }
    if (turn == null) {
      response.putNull("usage");
    } else {
      Usage usage = turn.usage();
      ObjectNode node = response.putObject("usage").put("input_tokens", usage.inputTokens());
      node.putObject("input_tokens_details").put("cached_tokens", usage.cacheReadTokens());
      node.put("output_tokens", usage.outputTokens());
      node.putObject("output_tokens_details").put("reasoning_tokens", 0);
      node.put("total_tokens", usage.inputTokens() + usage.outputTokens());
    }
    return response;
  }

  @Override
  Reply body(Received request, ScriptedTurn turn) {
    List<Output> outputs = responsesOutputs(turn);
    ObjectNode body = responsesObject(request, "resp_" + ids.incrementAndGet(), outputs, turn);
    return complete(body, turn.usage());
  }

  @Override
  Reply events(Received request, ScriptedTurn turn) {
    String id = "resp_" + ids.incrementAndGet();
    List<Output> outputs = responsesOutputs(turn);
    ResponsesStream out = new ResponsesStream();
    out.event(
        "response.created", node -> node.set("response", responsesObject(request, id, null, null)));
    out.event(
        "response.in_progress",
        node -> node.set("response", responsesObject(request, id, null, null)));
    for (int index = 0; index < outputs.size(); index++) {
      responsesItemEvents(out, index, outputs.get(index));
    }
    String last = turn.truncated() ? "response.incomplete" : "response.completed";
    out.event(last, node -> node.set("response", responsesObject(request, id, outputs, turn)));
    return streamed(out.events, turn.usage());
  }

  private static void responsesItemEvents(ResponsesStream out, int index, Output output) {
    String itemId = output.itemId();
    out.event(
        "response.output_item.added",
        node -> node.put("output_index", index).set("item", responsesItem(output, false)));
    if (output.call() != null) {
      for (String piece : pieces(output.call().arguments())) {
        out.event(
            "response.function_call_arguments.delta",
            node -> node.put("item_id", itemId).put("output_index", index).put("delta", piece));
      }
      out.event(
          "response.function_call_arguments.done",
          node ->
              node.put("item_id", itemId)
                  .put("output_index", index)
                  .put("arguments", output.call().arguments()));
    } else {
      out.event(
          "response.content_part.added",
          node ->
              node.put("item_id", itemId)
                  .put("output_index", index)
                  .put("content_index", 0)
                  .set("part", outputText("")));
      for (String piece : pieces(output.text())) {
        out.event(
            "response.output_text.delta",
            node ->
                node.put("item_id", itemId)
                    .put("output_index", index)
                    .put("content_index", 0)
                    .put("delta", piece));
      }
      out.event(
          "response.output_text.done",
          node ->
              node.put("item_id", itemId)
                  .put("output_index", index)
                  .put("content_index", 0)
                  .put("text", output.text()));
      out.event(
          "response.content_part.done",
          node ->
              node.put("item_id", itemId)
                  .put("output_index", index)
                  .put("content_index", 0)
                  .set("part", outputText(output.text())));
    }
    out.event(
        "response.output_item.done",
        node -> node.put("output_index", index).set("item", responsesItem(output, true)));
  }

  private static ObjectNode outputText(String text) {
    return JSON.createObjectNode()
        .put("type", "output_text")
        .put("text", text)
        .set("annotations", JSON.createArrayNode());
  }

  /**
   * Responses events carry their type twice (the SSE event name and "type") and a sequence number.
   */
  private static final class ResponsesStream {
    final List<String> events = new ArrayList<>();

    void event(String type, Consumer<ObjectNode> fill) {
      ObjectNode node =
          JSON.createObjectNode().put("type", type).put("sequence_number", events.size());
      fill.accept(node);
      events.add("event: " + type + "\ndata: " + node + "\n\n");
    }
  }
}
