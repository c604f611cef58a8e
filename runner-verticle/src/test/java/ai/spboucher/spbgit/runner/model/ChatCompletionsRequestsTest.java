package ai.spboucher.spbgit.runner.model;

import static ai.spboucher.spbgit.runner.model.RequestChecks.assertAdmitted;
import static ai.spboucher.spbgit.runner.model.RequestChecks.assertEachAdmitted;
import static ai.spboucher.spbgit.runner.model.RequestChecks.assertRefused;
import static java.util.Map.entry;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import org.junit.jupiter.api.Test;

/** The positive list of OpenAI Chat Completions requests: each admitted thing, and refusals. */
class ChatCompletionsRequestsTest {

  static final ModelApi API = ModelApi.CHAT_COMPLETIONS;

  /** Every top-level field admitted, with a value a client sends. */
  static final Map<String, String> FIELDS =
      Map.ofEntries(
          entry("model", "\"gpt-test\""),
          entry("messages", "[{\"role\":\"user\",\"content\":\"hi\"}]"),
          entry("frequency_penalty", "0.5"),
          entry("presence_penalty", "0.2"),
          entry("logit_bias", "{\"50256\":-100}"),
          entry("logprobs", "true"),
          entry("top_logprobs", "3"),
          entry("max_tokens", "16384"),
          entry("max_completion_tokens", "4096"),
          entry("metadata", "{\"job\":\"a1\"}"),
          entry("n", "1"),
          entry("parallel_tool_calls", "true"),
          entry("prompt_cache_key", "\"session-1\""),
          entry("prompt_cache_retention", "\"24h\""),
          entry("prompt_cache_options", "{\"mode\":\"implicit\"}"),
          entry("reasoning_effort", "\"high\""),
          entry("response_format", "{\"type\":\"json_object\"}"),
          entry("safety_identifier", "\"u-1\""),
          entry("seed", "7"),
          entry("stop", "[\"\\n\\n\"]"),
          entry("stream", "true"),
          entry("stream_options", "{\"include_usage\":true,\"include_obfuscation\":false}"),
          entry("temperature", "0.70"),
          entry("top_p", "0.9"),
          entry("user", "\"agent\""),
          entry("verbosity", "\"low\""),
          entry(
              "tools",
              "[{\"type\":\"function\",\"function\":{\"name\":\"write_file\",\"description\":\"w\","
                  + "\"parameters\":{\"type\":\"object\"},\"strict\":false}}]"),
          entry("tool_choice", "\"auto\""),
          entry("functions", "[{\"name\":\"f\",\"description\":\"d\",\"parameters\":{}}]"),
          entry("function_call", "{\"name\":\"f\"}"),
          entry("prediction", "{\"type\":\"content\",\"content\":\"old text\"}"),
          entry("store", "false"));

  /** Every part a user message may hold. */
  static final Map<String, String> PARTS =
      Map.of(
          "text",
          "{\"type\":\"text\",\"text\":\"hi\"}",
          "image_url",
          "{\"type\":\"image_url\",\"image_url\":{\"url\":\"data:image/png;base64,iVBORw0KGgo=\","
              + "\"detail\":\"low\"}}",
          "input_audio",
          "{\"type\":\"input_audio\",\"input_audio\":{\"data\":\"UklGRg==\",\"format\":\"wav\"}}",
          "file",
          "{\"type\":\"file\",\"file\":{\"file_data\":\"data:application/pdf;base64,JVBERi0=\","
              + "\"filename\":\"a.pdf\"}}");

  /** Every role of a message, each with all the fields it may have. */
  static final Map<String, String> MESSAGES =
      Map.of(
          "system", "{\"role\":\"system\",\"content\":\"rules\",\"name\":\"s\"}",
          "developer",
              "{\"role\":\"developer\",\"content\":[{\"type\":\"text\",\"text\":\"rules\"}]}",
          "user", "{\"role\":\"user\",\"name\":\"owner\",\"content\":\"task\"}",
          "assistant",
              "{\"role\":\"assistant\",\"name\":\"a\",\"content\":[{\"type\":\"text\",\"text\":\"ok\"},"
                  + "{\"type\":\"refusal\",\"refusal\":\"no\"}],\"refusal\":null,\"tool_calls\":["
                  + "{\"id\":\"c1\",\"type\":\"function\",\"function\":{\"name\":\"f\",\"arguments\":\"{}\"}},"
                  + "{\"id\":\"c2\",\"type\":\"custom\",\"custom\":{\"name\":\"patch\",\"input\":\"x\"}}],"
                  + "\"function_call\":{\"name\":\"f\",\"arguments\":\"{}\"}}",
          "tool",
              "{\"role\":\"tool\",\"tool_call_id\":\"c1\",\"content\":[{\"type\":\"text\",\"text\":\"out\"}]}",
          "function", "{\"role\":\"function\",\"name\":\"f\",\"content\":\"out\"}");

  static final Map<String, String> TOOLS =
      Map.of(
          "function",
          "{\"type\":\"function\",\"function\":{\"name\":\"read_file\",\"parameters\":{}}}",
          "custom",
          "{\"type\":\"custom\",\"custom\":{\"name\":\"patch\",\"description\":\"d\","
              + "\"format\":{\"type\":\"text\"}}}");

  static final Map<String, String> TOOL_CHOICES =
      Map.of(
          "function", "{\"type\":\"function\",\"function\":{\"name\":\"read_file\"}}",
          "custom", "{\"type\":\"custom\",\"custom\":{\"name\":\"patch\"}}",
          "allowed_tools",
              "{\"type\":\"allowed_tools\",\"allowed_tools\":{\"mode\":\"auto\",\"tools\":["
                  + "{\"type\":\"function\",\"function\":{\"name\":\"read_file\"}}]}}");

  @Test
  void everyAdmittedFieldPasses() {
    assertEquals(ChatCompletionsRequests.BODY.names(), FIELDS.keySet(), "a sample for each");
    FIELDS.forEach((name, value) -> assertAdmitted(API, "{\"" + name + "\":" + value + "}"));
  }

  @Test
  void everyAdmittedPartRoleToolAndToolChoicePasses() {
    assertEquals(ChatCompletionsRequests.PARTS.admittedValues(), PARTS.keySet());
    assertEquals(ChatCompletionsRequests.MESSAGES.admittedValues(), MESSAGES.keySet());
    assertEquals(ChatCompletionsRequests.TOOLS.admittedValues(), TOOLS.keySet());
    assertEquals(ChatCompletionsRequests.TOOL_CHOICES.admittedValues(), TOOL_CHOICES.keySet());
    assertEachAdmitted(
        API, PARTS, part -> "{\"messages\":[{\"role\":\"user\",\"content\":[" + part + "]}]}");
    assertEachAdmitted(API, MESSAGES, message -> "{\"messages\":[" + message + "]}");
    assertEachAdmitted(API, TOOLS, tool -> "{\"tools\":[" + tool + "]}");
    assertEachAdmitted(API, TOOL_CHOICES, choice -> "{\"tool_choice\":" + choice + "}");
    for (String choice : new String[] {"auto", "none", "required"}) {
      assertAdmitted(API, "{\"tool_choice\":\"" + choice + "\"}");
    }
  }

  @Test
  void whatQwenCodeAndTheBuiltinAgentSendPasses() {
    // qwen-code 0.24.4 (as the provider received it from the endpoint).
    assertAdmitted(
        API,
        """
        {"model":"gpt-test","max_tokens":16384,"stream":true,"stream_options":{"include_usage":true},
         "messages":[{"role":"system","content":"You are Qwen Code"},
          {"role":"user","content":[{"type":"text","text":"- Create hello.txt."}]},
          {"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function",
            "function":{"name":"write_file","arguments":"{\\"file_path\\":\\"/work/repo/hello.txt\\"}"}}]},
          {"role":"tool","tool_call_id":"call_1","content":[{"type":"text","text":"written"}]}],
         "tools":[{"type":"function","function":{"name":"write_file","description":"Writes a file",
          "parameters":{"type":"object","properties":{}}}},
          {"type":"function","function":{"name":"list_directory","description":"Lists"}}]}
        """);
    // The built-in agent (builtin-agent module, OpenAiChat).
    assertAdmitted(
        API,
        """
        {"model":"gpt-test","stream":false,"messages":[{"role":"system","content":"rules"},
          {"role":"user","content":"task"},
          {"role":"assistant","content":"reading","tool_calls":[{"id":"c1","type":"function",
            "function":{"name":"read_file","arguments":"{}"}}]},
          {"role":"tool","tool_call_id":"c1","content":"hello"}],
         "tools":[{"type":"function","function":{"name":"read_file","description":"Reads",
          "parameters":{"type":"object"}}}],"tool_choice":"auto"}
        """);
  }

  @Test
  void providerSideFeaturesAndUnknownFieldsAreRefusedNamingTheField() {
    assertRefused(API, "{\"web_search_options\":{}}", "web_search_options");
    assertRefused(API, "{\"service_tier\":\"priority\"}", "service_tier");
    assertRefused(API, "{\"audio\":{\"voice\":\"alloy\",\"format\":\"wav\"}}", "audio");
    assertRefused(API, "{\"modalities\":[\"text\",\"audio\"]}", "modalities");
    assertRefused(API, "{\"moderation\":{}}", "moderation");
    assertRefused(API, "{\"background\":true}", "background");
    assertRefused(API, "{\"pad\":\"x\"}", "pad");
    assertRefused(API, "{\"stream_options\":{\"include_usage\":true,\"x\":1}}", "stream_options.x");
    String stored = assertRefused(API, "{\"store\":true}", "store");
    assertTrue(stored.contains("only be false"), stored);
  }

  @Test
  void contentGivenByUrlOrUploadedFileIsRefused() {
    String user = "{\"messages\":[{\"role\":\"user\",\"content\":[%s]}]}";
    String path = "messages[0].content[0]";
    String message =
        assertRefused(
            API,
            user.formatted(
                "{\"type\":\"image_url\",\"image_url\":{\"url\":\"https://collector.example/x.png"
                    + "?repo=secret\"}}"),
            path + ".image_url.url");
    assertTrue(message.contains("data: URL"), message);
    assertRefused(
        API,
        user.formatted("{\"type\":\"image_url\",\"image_url\":{\"url\":\"http://10.0.0.1/a\"}}"),
        path + ".image_url.url");
    assertRefused(
        API,
        user.formatted("{\"type\":\"file\",\"file\":{\"file_id\":\"file-abc\"}}"),
        path + ".file.file_id");
    assertRefused(
        API,
        user.formatted("{\"type\":\"input_image\",\"image_url\":\"data:image/png;base64,AA==\"}"),
        path + ".type");
    assertRefused(
        API,
        "{\"messages\":[{\"role\":\"system\",\"content\":[{\"type\":\"image_url\",\"image_url\":"
            + "{\"url\":\"data:image/png;base64,AA==\"}}]}]}",
        path + ".type");
  }

  @Test
  void toolsMessagesAndChoicesOffTheListAreRefused() {
    assertRefused(API, "{\"tools\":[{\"type\":\"web_search\"}]}", "tools[0].type");
    assertRefused(
        API, "{\"tools\":[{\"function\":{\"name\":\"f\"}}]}", "tools[0]"); // no type at all
    assertRefused(
        API,
        "{\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"f\",\"server_url\":\"https://x\"}}]}",
        "tools[0].function.server_url");
    assertRefused(API, "{\"tool_choice\":{\"type\":\"web_search\"}}", "tool_choice.type");
    assertRefused(
        API, "{\"messages\":[{\"role\":\"critic\",\"content\":\"x\"}]}", "messages[0].role");
    assertRefused(
        API,
        "{\"messages\":[{\"role\":\"assistant\",\"audio\":{\"id\":\"audio_1\"}}]}",
        "messages[0].audio");
    assertRefused(
        API,
        "{\"messages\":[{\"role\":\"assistant\",\"tool_calls\":[{\"id\":\"c\",\"type\":\"mcp\"}]}]}",
        "messages[0].tool_calls[0].type");
  }
}
