package ai.spboucher.spbgit.runner.model;

import ai.spboucher.spbgit.runner.sockets.Refusal;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.charset.StandardCharsets;

/**
 * One provider API the model endpoint forwards, by its path: what a request may hold (its positive
 * list: {@link ChatCompletionsRequests}, {@link ResponsesRequests}, {@link MessagesRequests}), how
 * it is prepared, where a complete answer reports its usage, how its server-sent events report
 * usage and carry generated text, and how it ends a stream with an error. Plain Java: no I/O.
 */
public enum ModelApi {

  /** OpenAI Chat Completions; streamed usage comes in a last chunk asked for by include_usage. */
  CHAT_COMPLETIONS("/v1/chat/completions") {
    @Override
    Admitted.Fields admitted() {
      return ChatCompletionsRequests.BODY;
    }

    @Override
    void prepare(ObjectNode body, String model) {
      super.prepare(body, model);
      if (streams(body)) {
        // Without it a stream reports no usage at all; the agent gets the extra last chunk, which
        // the API documents and every OpenAI client accepts.
        JsonNode options = body.get("stream_options");
        ObjectNode asked =
            options instanceof ObjectNode object ? object : body.putObject("stream_options");
        asked.put("include_usage", true);
      }
    }

    @Override
    Usage usage(JsonNode answer) {
      JsonNode usage = answer.path("usage");
      return new Usage(count(usage, "prompt_tokens"), count(usage, "completion_tokens"));
    }

    @Override
    void read(String event, JsonNode data, StreamTally tally) {
      JsonNode usage = data.path("usage");
      if (usage.isObject()) {
        tally.reportInput(count(usage, "prompt_tokens"));
        tally.reportOutput(count(usage, "completion_tokens"));
      }
      for (JsonNode choice : data.path("choices")) {
        JsonNode delta = choice.path("delta");
        tally.addText(delta.path("content"));
        tally.addText(delta.path("reasoning_content"));
        tally.addText(delta.path("reasoning"));
        for (JsonNode call : delta.path("tool_calls")) {
          tally.addText(call.path("function").path("name"));
          tally.addText(call.path("function").path("arguments"));
        }
      }
    }

    @Override
    long textChars(TextScan.TextField field) {
      return switch (field.parent()) {
        case "delta" ->
            switch (field.name()) {
              case "content", "reasoning_content", "reasoning" -> field.chars();
              default -> 0;
            };
        case "function" ->
            field.name().equals("name") || field.name().equals("arguments") ? field.chars() : 0;
        default -> 0;
      };
    }

    @Override
    String errorEvent(String type, String message) {
      ObjectNode body = JSON.createObjectNode();
      body.putObject("error").put("message", message).put("type", type).put("code", type);
      return "data: " + body + "\n\n";
    }
  },

  /** OpenAI Responses; streamed usage in {@code response.completed} (or failed, incomplete). */
  RESPONSES("/v1/responses") {
    @Override
    Admitted.Fields admitted() {
      return ResponsesRequests.BODY;
    }

    @Override
    void prepare(ObjectNode body, String model) {
      super.prepare(body, model);
      if (body.path("store").isMissingNode() || body.path("store").isNull()) {
        // The API keeps every response it is not told to drop: nothing of the job stays behind.
        body.put("store", false);
      }
    }

    @Override
    Usage usage(JsonNode answer) {
      JsonNode usage = answer.path("usage");
      return new Usage(count(usage, "input_tokens"), count(usage, "output_tokens"));
    }

    @Override
    void read(String event, JsonNode data, StreamTally tally) {
      String type = data.path("type").asText(event);
      JsonNode usage = data.path("response").path("usage");
      if (type.startsWith("response.") && usage.isObject()) {
        tally.reportInput(count(usage, "input_tokens"));
        tally.reportOutput(count(usage, "output_tokens"));
      } else if (type.endsWith(".delta")) {
        tally.addText(data.path("delta"));
      }
    }

    @Override
    long textChars(TextScan.TextField field) {
      return field.depth() == 1 && field.name().equals("delta") ? field.chars() : 0;
    }

    @Override
    boolean countsText(String event, String type) {
      return (type == null ? event : type).endsWith(".delta");
    }

    @Override
    String errorEvent(String type, String message) {
      ObjectNode body =
          JSON.createObjectNode().put("type", "response.failed").put("sequence_number", 0);
      ObjectNode response =
          body.putObject("response").put("object", "response").put("status", "failed");
      response.putObject("error").put("code", type).put("message", message);
      return "event: response.failed\ndata: " + body + "\n\n";
    }
  },

  /** Anthropic Messages; streamed usage in {@code message_start} and {@code message_delta}. */
  MESSAGES("/v1/messages") {
    @Override
    Admitted.Fields admitted() {
      return MessagesRequests.BODY;
    }

    @Override
    Usage usage(JsonNode answer) {
      JsonNode usage = answer.path("usage");
      return new Usage(anthropicInput(usage), count(usage, "output_tokens"));
    }

    @Override
    void read(String event, JsonNode data, StreamTally tally) {
      switch (data.path("type").asText(event)) {
        case "message_start" -> {
          JsonNode usage = data.path("message").path("usage");
          tally.reportInput(anthropicInput(usage));
          tally.reportOutput(count(usage, "output_tokens"));
        }
        case "message_delta" -> {
          // Cumulative counts; newer API versions repeat the input here too.
          JsonNode usage = data.path("usage");
          if (usage.has("input_tokens")) {
            tally.reportInput(anthropicInput(usage));
          }
          if (usage.has("output_tokens")) {
            tally.reportOutput(count(usage, "output_tokens"));
          }
        }
        case "content_block_delta" -> {
          JsonNode delta = data.path("delta");
          tally.addText(delta.path("text"));
          tally.addText(delta.path("partial_json"));
          tally.addText(delta.path("thinking"));
        }
        default -> {
          // ping, content_block_start/stop, message_stop: nothing to count.
        }
      }
    }

    @Override
    long textChars(TextScan.TextField field) {
      if (field.depth() != 2 || !field.parent().equals("delta")) {
        return 0;
      }
      return switch (field.name()) {
        case "text", "partial_json", "thinking" -> field.chars();
        default -> 0;
      };
    }

    @Override
    boolean countsText(String event, String type) {
      return (type == null ? event : type).equals("content_block_delta");
    }

    @Override
    boolean mayReportUsage(String event, String data) {
      // message_start reports input even with no usage object in it (as zero).
      return event.equals("message_start")
          || event.equals("message_delta")
          || data.contains("\"message_start\"")
          || data.contains("\"message_delta\"")
          || super.mayReportUsage(event, data);
    }

    @Override
    String errorEvent(String type, String message) {
      ObjectNode body = JSON.createObjectNode().put("type", "error");
      body.putObject("error").put("type", type).put("message", message);
      return "event: error\ndata: " + body + "\n\n";
    }
  },

  /** Anthropic's token counting: free, never streamed, no usage. */
  COUNT_TOKENS("/v1/messages/count_tokens") {
    @Override
    Admitted.Fields admitted() {
      return MessagesRequests.COUNT_TOKENS_BODY;
    }

    @Override
    boolean streams(ObjectNode body) {
      return false;
    }

    @Override
    Usage usage(JsonNode answer) {
      return Usage.NONE;
    }

    @Override
    void read(String event, JsonNode data, StreamTally tally) {
      // Never streamed.
    }

    @Override
    String errorEvent(String type, String message) {
      return MESSAGES.errorEvent(type, message);
    }
  };

  private static final ObjectMapper JSON = new ObjectMapper();

  private final String path;

  ModelApi(String path) {
    this.path = path;
  }

  /** The path the agent calls and the endpoint forwards to (below the provider's base URL). */
  public String path() {
    return path;
  }

  /** Whether the agent asked for server-sent events. */
  boolean streams(ObjectNode body) {
    return body.path("stream").asBoolean(false);
  }

  /**
   * What a request body may hold: the positive list of its fields, content parts and tools (see
   * {@link Admitted}).
   */
  abstract Admitted.Fields admitted();

  /**
   * Refuses a body holding anything {@link #admitted()} does not list.
   *
   * @throws Refusal 400 {@code feature_not_allowed} naming the first field not admitted
   */
  void admit(ObjectNode body) throws Refusal {
    admitted().check(body, "");
  }

  /**
   * Makes the agent's request body, once admitted, one the runner is willing to send: the job's
   * model, whatever the API needs to report its usage, and nothing kept at the provider.
   */
  void prepare(ObjectNode body, String model) {
    body.put("model", model);
  }

  /** The usage a complete (successful or not) JSON answer reports; zero for what it does not. */
  abstract Usage usage(JsonNode answer);

  /**
   * Reads one server-sent event of a streamed answer into {@code tally}: the usage it reports and
   * the generated text it carries.
   *
   * @param event the event's {@code event:} name, or empty
   * @param data its {@code data:} parsed as JSON
   */
  abstract void read(String event, JsonNode data, StreamTally tally);

  /**
   * Reads one server-sent event's {@code data:} (JSON) into {@code tally} as {@link #read} does,
   * but cheaply for the events that make up almost all of a stream, the text deltas: an event whose
   * bytes do not name {@code "usage"} cannot report usage, so it is only walked token by token for
   * the lengths of its generated text, without building a tree. Every other event is parsed whole
   * and read by {@link #read}.
   *
   * @throws IOException when {@code data} is not JSON (nothing is counted then)
   */
  final void readEvent(String event, String data, StreamTally tally) throws IOException {
    if (mayReportUsage(event, data)) {
      read(event, ModelEndpoint.JSON.readTree(data), tally);
      return;
    }
    TextScan.Result scanned = TextScan.scan(data, this::textChars);
    if (scanned.chars() > 0 && countsText(event, scanned.type())) {
      tally.addTextChars(scanned.chars());
    }
  }

  /**
   * Whether an event may report usage, so it must be read whole: it has a {@code "usage"} object (a
   * {@code "usage":null}, which OpenAI's chunks carry, reports nothing).
   */
  boolean mayReportUsage(String event, String data) {
    return TextScan.namesUsage(data);
  }

  /** How much of {@code field} is generated text, the same text {@link #read} counts. */
  long textChars(TextScan.TextField field) {
    return 0;
  }

  /** Whether an event of this name and top-level {@code type} (null when none) carries text. */
  boolean countsText(String event, String type) {
    return true;
  }

  /** A complete server-sent event that ends a stream with an error the API's clients understand. */
  abstract String errorEvent(String type, String message);

  /** {@link #errorEvent} as bytes. */
  byte[] errorEventBytes(String type, String message) {
    return errorEvent(type, message).getBytes(StandardCharsets.UTF_8);
  }

  /** Prompt-cache reads and writes are input the provider bills too. */
  private static long anthropicInput(JsonNode usage) {
    return count(usage, "input_tokens")
        + count(usage, "cache_creation_input_tokens")
        + count(usage, "cache_read_input_tokens");
  }

  static long count(JsonNode usage, String field) {
    JsonNode value = usage.path(field);
    return value.canConvertToLong() ? Math.max(0, value.asLong()) : 0;
  }
}
