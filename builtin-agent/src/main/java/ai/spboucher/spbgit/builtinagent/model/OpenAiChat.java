package ai.spboucher.spbgit.builtinagent.model;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * OpenAI-compatible Chat Completions with function tools ({@code POST /v1/chat/completions}):
 * OpenAI, Ollama, vLLM, llama.cpp server, LM Studio. Tool results go back as {@code role: tool}
 * messages. The {@code usage} of a reply is the proxy's business and ignored here.
 */
public final class OpenAiChat implements ModelClient {
  private static final JsonNodeFactory NODES = JsonNodeFactory.instance;

  private final ModelHttp http;
  private final String model;
  private final String system;
  private final ArrayNode tools;
  private int generatedIds;

  public OpenAiChat(ModelHttp http, String model, String system, List<ToolSpec> specs) {
    this.http = http;
    this.model = model;
    this.system = system;
    this.tools = NODES.arrayNode();
    for (ToolSpec spec : specs) {
      ObjectNode function =
          NODES
              .objectNode()
              .put("name", spec.name())
              .put("description", spec.description())
              .set("parameters", spec.schema());
      tools.addObject().put("type", "function").set("function", function);
    }
  }

  @Override
  public Message.AssistantTurn next(List<Message> transcript)
      throws ProviderException, BudgetExceededException, StopRequestedException {
    ObjectNode body = NODES.objectNode().put("model", model).put("stream", false);
    body.set("messages", render(transcript));
    body.set("tools", tools);
    body.put("tool_choice", "auto");
    return read(http.post("/v1/chat/completions", Map.of(), body));
  }

  private ArrayNode render(List<Message> transcript) {
    ArrayNode messages = NODES.arrayNode();
    messages.addObject().put("role", "system").put("content", system);
    for (Message message : transcript) {
      if (message instanceof Message.UserText user) {
        messages.addObject().put("role", "user").put("content", user.text());
      } else if (message instanceof Message.AssistantTurn turn) {
        ObjectNode assistant = messages.addObject().put("role", "assistant");
        if (turn.calls().isEmpty()) {
          assistant.put("content", turn.text().isEmpty() ? "(empty reply)" : turn.text());
          continue;
        }
        if (turn.text().isEmpty()) {
          assistant.putNull("content");
        } else {
          assistant.put("content", turn.text());
        }
        ArrayNode calls = assistant.putArray("tool_calls");
        for (Message.ToolCall call : turn.calls()) {
          calls
              .addObject()
              .put("id", call.id())
              .put("type", "function")
              .putObject("function")
              .put("name", call.name())
              .put("arguments", call.arguments());
        }
      } else if (message instanceof Message.ToolResults results) {
        for (Message.ToolOutput output : results.outputs()) {
          messages
              .addObject()
              .put("role", "tool")
              .put("tool_call_id", output.callId())
              .put("content", output.error() ? "error: " + output.content() : output.content());
        }
      }
    }
    return messages;
  }

  private Message.AssistantTurn read(JsonNode reply) throws ProviderException {
    JsonNode choice = reply.path("choices").path(0);
    if (!choice.isObject()) {
      throw new ProviderException(
          "malformed reply: no choices"
              + (reply.has("error") ? " (" + ModelHttp.errorText(reply.toString()) + ")" : ""));
    }
    JsonNode message = choice.path("message");
    List<Message.ToolCall> calls = new ArrayList<>();
    for (JsonNode call : message.path("tool_calls")) {
      JsonNode function = call.path("function");
      JsonNode arguments = function.path("arguments");
      String raw =
          arguments.isTextual()
              ? arguments.asText()
              : arguments.isMissingNode() || arguments.isNull() ? "{}" : arguments.toString();
      String id = call.path("id").asText("");
      calls.add(
          new Message.ToolCall(
              id.isEmpty() ? "call_" + ++generatedIds : id, function.path("name").asText(""), raw));
    }
    return new Message.AssistantTurn(
        text(message.path("content")),
        calls,
        "length".equals(choice.path("finish_reason").asText()));
  }

  /** {@code content} is a string, null, or (some servers) a list of parts. */
  private static String text(JsonNode content) {
    if (content.isTextual()) {
      return content.asText();
    }
    StringBuilder text = new StringBuilder();
    for (JsonNode part : content) {
      if (part.path("text").isTextual()) {
        text.append(part.get("text").asText());
      }
    }
    return text.toString();
  }
}
