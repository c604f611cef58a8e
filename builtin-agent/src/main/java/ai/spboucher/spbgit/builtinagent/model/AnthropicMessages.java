package ai.spboucher.spbgit.builtinagent.model;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The Anthropic Messages API with tool use ({@code POST /v1/messages}, {@code anthropic-version:
 * 2023-06-01}): {@code tool_use} blocks in the assistant's content, {@code tool_result} blocks in
 * the next user message. No {@code x-api-key}: the runner's proxy adds it.
 */
public final class AnthropicMessages implements ModelClient {
  public static final String VERSION = "2023-06-01";
  private static final JsonNodeFactory NODES = JsonNodeFactory.instance;
  private static final ObjectMapper JSON = new ObjectMapper();

  private final ModelHttp http;
  private final String model;
  private final String system;
  private final int maxTokens;
  private final ArrayNode tools;
  private int generatedIds;

  public AnthropicMessages(
      ModelHttp http, String model, String system, int maxTokens, List<ToolSpec> specs) {
    this.http = http;
    this.model = model;
    this.system = system;
    this.maxTokens = maxTokens;
    this.tools = NODES.arrayNode();
    for (ToolSpec spec : specs) {
      tools
          .addObject()
          .put("name", spec.name())
          .put("description", spec.description())
          .set("input_schema", spec.schema());
    }
  }

  @Override
  public Message.AssistantTurn next(List<Message> transcript)
      throws ProviderException, BudgetExceededException, StopRequestedException {
    ObjectNode body =
        NODES.objectNode().put("model", model).put("max_tokens", maxTokens).put("system", system);
    body.set("messages", render(transcript));
    body.set("tools", tools);
    return read(http.post("/v1/messages", Map.of("anthropic-version", VERSION), body));
  }

  private static ArrayNode render(List<Message> transcript) {
    ArrayNode messages = NODES.arrayNode();
    for (Message message : transcript) {
      if (message instanceof Message.UserText user) {
        messages.addObject().put("role", "user").put("content", user.text());
      } else if (message instanceof Message.AssistantTurn turn) {
        ArrayNode content = messages.addObject().put("role", "assistant").putArray("content");
        if (!turn.text().isEmpty() || turn.calls().isEmpty()) {
          content
              .addObject()
              .put("type", "text")
              .put("text", turn.text().isEmpty() ? "(empty reply)" : turn.text());
        }
        for (Message.ToolCall call : turn.calls()) {
          content
              .addObject()
              .put("type", "tool_use")
              .put("id", call.id())
              .put("name", call.name())
              .set("input", input(call.arguments()));
        }
      } else if (message instanceof Message.ToolResults results) {
        ArrayNode content = messages.addObject().put("role", "user").putArray("content");
        for (Message.ToolOutput output : results.outputs()) {
          ObjectNode block =
              content
                  .addObject()
                  .put("type", "tool_result")
                  .put("tool_use_id", output.callId())
                  .put("content", output.content());
          if (output.error()) {
            block.put("is_error", true);
          }
        }
      }
    }
    return messages;
  }

  /** The input object as the model sent it; the API requires an object even for a mangled call. */
  private static JsonNode input(String arguments) {
    try {
      JsonNode node = JSON.readTree(arguments);
      return node != null && node.isObject() ? node : NODES.objectNode();
    } catch (JsonProcessingException e) {
      return NODES.objectNode();
    }
  }

  private Message.AssistantTurn read(JsonNode reply) throws ProviderException {
    JsonNode content = reply.path("content");
    if (!content.isArray()) {
      throw new ProviderException(
          "malformed reply: no content"
              + (reply.has("error") ? " (" + ModelHttp.errorText(reply.toString()) + ")" : ""));
    }
    StringBuilder text = new StringBuilder();
    List<Message.ToolCall> calls = new ArrayList<>();
    for (JsonNode block : content) {
      String type = block.path("type").asText();
      if ("text".equals(type)) {
        if (text.length() > 0) {
          text.append('\n');
        }
        text.append(block.path("text").asText(""));
      } else if ("tool_use".equals(type)) {
        JsonNode input = block.path("input");
        String id = block.path("id").asText("");
        calls.add(
            new Message.ToolCall(
                id.isEmpty() ? "toolu_generated_" + ++generatedIds : id,
                block.path("name").asText(""),
                input.isMissingNode() ? "{}" : input.toString()));
      }
    }
    return new Message.AssistantTurn(
        text.toString(), calls, "max_tokens".equals(reply.path("stop_reason").asText()));
  }
}
