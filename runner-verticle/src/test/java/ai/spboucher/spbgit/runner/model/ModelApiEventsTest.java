package ai.spboucher.spbgit.runner.model;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@link ModelApi#readEvent}, which walks the text deltas without a JSON tree, counts what {@link
 * ModelApi#read} counts from the tree: the same usage, the same estimate, event by event.
 */
class ModelApiEventsTest {

  @Test
  void chatCompletionChunksCountTheSameAsTheirTree() throws Exception {
    assertSameAsTree(
        ModelApi.CHAT_COMPLETIONS,
        List.of(
            "{\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\","
                + "\"content\":\"Hello t\\u00e9 \\\"usage\\\"\"},\"finish_reason\":null}],"
                + "\"usage\":null}",
            "{\"choices\":[{\"delta\":{\"reasoning_content\":\"think\",\"reasoning\":\"more\"}}]}",
            "{\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_1\","
                + "\"type\":\"function\",\"function\":{\"name\":\"write\",\"arguments\":"
                + "\"{\\\"path\\\":\\\"a\\\"}\"}}]}}],\"usage\": null}",
            // Not text: logprobs' content is an array; the model's name is not generated text.
            "{\"model\":\"m\",\"choices\":[{\"delta\":{},\"logprobs\":{\"content\":[]}}]}",
            "{\"choices\":[],\"usage\":{\"prompt_tokens\":12,\"completion_tokens\":7}}"));
  }

  @Test
  void responsesEventsCountTheSameAsTheirTree() throws Exception {
    assertSameAsTree(
        ModelApi.RESPONSES,
        List.of(
            "response.created",
            "{\"type\":\"response.created\",\"response\":{\"id\":\"r\",\"usage\":null}}",
            "response.output_text.delta",
            "{\"type\":\"response.output_text.delta\",\"item_id\":\"i\",\"delta\":\"Hi there\"}",
            "response.function_call_arguments.delta",
            "{\"type\":\"response.function_call_arguments.delta\",\"delta\":\"{\\\"a\\\":1}\"}",
            "response.output_text.done",
            "{\"type\":\"response.output_text.done\",\"text\":\"Hi there\"}",
            // The type from the event's name when the data has none.
            "response.output_text.delta",
            "{\"delta\":\"more\"}",
            "response.completed",
            "{\"type\":\"response.completed\",\"response\":{\"usage\":{\"input_tokens\":30,"
                + "\"output_tokens\":9}}}"));
  }

  @Test
  void messagesEventsCountTheSameAsTheirTree() throws Exception {
    assertSameAsTree(
        ModelApi.MESSAGES,
        List.of(
            "message_start",
            "{\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":40,"
                + "\"cache_read_input_tokens\":5,\"output_tokens\":1}}}",
            "content_block_start",
            "{\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\","
                + "\"text\":\"\"}}",
            "content_block_delta",
            "{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\","
                + "\"text\":\"Some text\"}}",
            "content_block_delta",
            "{\"type\":\"content_block_delta\",\"delta\":{\"type\":\"input_json_delta\","
                + "\"partial_json\":\"{\\\"file\\\"\"}}",
            "ping",
            "{\"type\":\"ping\"}",
            "message_delta",
            "{\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},"
                + "\"usage\":{\"output_tokens\":25}}"));
  }

  @Test
  void onlyAUsageObjectSendsAnEventToTheTree() {
    ModelApi chat = ModelApi.CHAT_COMPLETIONS;
    assertFalse(chat.mayReportUsage("", "{\"usage\":null,\"choices\":[]}"));
    assertFalse(chat.mayReportUsage("", "{\"usage\" : null}"));
    assertTrue(chat.mayReportUsage("", "{\"usage\":null,\"x\":{\"usage\":{\"a\":1}}}"));
    assertTrue(chat.mayReportUsage("", "{\"usage\": {\"prompt_tokens\":1}}"));
    assertTrue(ModelApi.MESSAGES.mayReportUsage("message_start", "{}"));
  }

  /** {@code events}: name and data, alternately (a chat stream's events have no name). */
  private static void assertSameAsTree(ModelApi api, List<String> events) throws Exception {
    StreamTally cheap = new StreamTally(400);
    StreamTally tree = new StreamTally(400);
    boolean named = api != ModelApi.CHAT_COMPLETIONS;
    for (int i = 0; i < events.size(); i += named ? 2 : 1) {
      String event = named ? events.get(i) : "";
      String data = events.get(named ? i + 1 : i);
      api.readEvent(event, data, cheap);
      api.read(event, ModelEndpoint.JSON.readTree(data), tree);
      assertEquals(tree.estimate(), cheap.estimate(), "after " + data);
    }
    assertTrue(cheap.complete(), "usage reported");
    assertEquals(tree.reported(), cheap.reported());
    assertTrue(cheap.estimate().outputTokens() > 0);
  }
}
