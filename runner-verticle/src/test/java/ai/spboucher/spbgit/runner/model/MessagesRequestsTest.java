package ai.spboucher.spbgit.runner.model;

import static ai.spboucher.spbgit.runner.model.RequestChecks.assertAdmitted;
import static ai.spboucher.spbgit.runner.model.RequestChecks.assertEachAdmitted;
import static ai.spboucher.spbgit.runner.model.RequestChecks.assertRefused;
import static java.util.Map.entry;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The positive list of Anthropic Messages and count_tokens requests: admitted, and refused. */
class MessagesRequestsTest {

  static final ModelApi API = ModelApi.MESSAGES;

  /** Every top-level field of {@code count_tokens}, admitted in Messages too. */
  static final Map<String, String> COUNTED_FIELDS =
      Map.ofEntries(
          entry("model", "\"claude-test\""),
          entry("messages", "[{\"role\":\"user\",\"content\":\"hi\"}]"),
          entry(
              "system",
              "[{\"type\":\"text\",\"text\":\"rules\",\"cache_control\":{\"type\":\"ephemeral\"}}]"),
          entry("tools", "[{\"name\":\"Write\",\"input_schema\":{\"type\":\"object\"}}]"),
          entry("tool_choice", "{\"type\":\"auto\"}"),
          entry("thinking", "{\"type\":\"adaptive\",\"display\":\"updates\"}"),
          entry(
              "context_management",
              "{\"edits\":[{\"type\":\"clear_thinking_20251015\",\"keep\":\"all\"}]}"),
          entry("output_config", "{\"effort\":\"high\"}"),
          entry("output_format", "{\"type\":\"json_schema\",\"schema\":{}}"),
          entry("cache_control", "{\"type\":\"ephemeral\"}"));

  /** The fields Messages admits besides. */
  static final Map<String, String> MESSAGES_FIELDS =
      Map.of(
          "max_tokens", "32000",
          "stop_sequences", "[\"END\"]",
          "stream", "true",
          "temperature", "1",
          "top_k", "40",
          "top_p", "0.95",
          "metadata", "{\"user_id\":\"user_abc\"}");

  static final Map<String, String> BLOCKS =
      Map.ofEntries(
          entry(
              "text",
              "{\"type\":\"text\",\"text\":\"hi\",\"cache_control\":{\"type\":\"ephemeral\",\"ttl\":\"1h\"},"
                  + "\"citations\":null}"),
          entry(
              "image",
              "{\"type\":\"image\",\"source\":{\"type\":\"base64\",\"media_type\":\"image/png\","
                  + "\"data\":\"iVBORw0KGgo=\"}}"),
          entry(
              "document",
              "{\"type\":\"document\",\"title\":\"t\",\"context\":\"c\",\"citations\":{\"enabled\":true},"
                  + "\"source\":{\"type\":\"text\",\"media_type\":\"text/plain\",\"data\":\"body\"}}"),
          entry(
              "search_result",
              "{\"type\":\"search_result\",\"source\":\"https://docs.example/a\",\"title\":\"a\","
                  + "\"content\":[{\"type\":\"text\",\"text\":\"found\"}]}"),
          entry("thinking", "{\"type\":\"thinking\",\"thinking\":\"hm\",\"signature\":\"sig\"}"),
          entry("redacted_thinking", "{\"type\":\"redacted_thinking\",\"data\":\"enc\"}"),
          entry(
              "tool_use", "{\"type\":\"tool_use\",\"id\":\"tu1\",\"name\":\"Write\",\"input\":{}}"),
          entry(
              "tool_result",
              "{\"type\":\"tool_result\",\"tool_use_id\":\"tu1\",\"is_error\":true,"
                  + "\"cache_control\":{\"type\":\"ephemeral\"},\"content\":[{\"type\":\"text\",\"text\":\"e\"},"
                  + "{\"type\":\"image\",\"source\":{\"type\":\"base64\",\"media_type\":\"image/png\","
                  + "\"data\":\"AA==\"}},{\"type\":\"tool_reference\",\"tool_name\":\"Grep\"}]}"),
          entry("tool_reference", "{\"type\":\"tool_reference\",\"tool_name\":\"Grep\"}"),
          entry("compaction", "{\"type\":\"compaction\",\"content\":\"summary\"}"));

  static final Map<String, String> TOOLS =
      Map.ofEntries(
          entry(
              "custom",
              "{\"type\":\"custom\",\"name\":\"Write\",\"description\":\"d\",\"input_schema\":{},"
                  + "\"strict\":true,\"eager_input_streaming\":true,\"input_examples\":[],"
                  + "\"defer_loading\":false,\"cache_control\":{\"type\":\"ephemeral\"}}"),
          entry("bash_20241022", "{\"type\":\"bash_20241022\",\"name\":\"bash\"}"),
          entry("bash_20250124", "{\"type\":\"bash_20250124\",\"name\":\"bash\"}"),
          entry(
              "text_editor_20241022",
              "{\"type\":\"text_editor_20241022\",\"name\":\"str_replace_editor\"}"),
          entry(
              "text_editor_20250124",
              "{\"type\":\"text_editor_20250124\",\"name\":\"str_replace_editor\"}"),
          entry(
              "text_editor_20250429",
              "{\"type\":\"text_editor_20250429\",\"name\":\"str_replace_based_edit_tool\"}"),
          entry(
              "text_editor_20250728",
              "{\"type\":\"text_editor_20250728\",\"name\":\"str_replace_based_edit_tool\","
                  + "\"max_characters\":10000}"),
          entry(
              "computer_20241022",
              "{\"type\":\"computer_20241022\",\"name\":\"computer\",\"display_width_px\":1024,"
                  + "\"display_height_px\":768,\"display_number\":1}"),
          entry(
              "computer_20250124",
              "{\"type\":\"computer_20250124\",\"name\":\"computer\",\"display_width_px\":1024,"
                  + "\"display_height_px\":768}"),
          entry(
              "computer_20251124",
              "{\"type\":\"computer_20251124\",\"name\":\"computer\",\"display_width_px\":1024,"
                  + "\"display_height_px\":768,\"enable_zoom\":true}"),
          entry("memory_20250818", "{\"type\":\"memory_20250818\",\"name\":\"memory\"}"));

  static final Map<String, String> TOOL_CHOICES =
      Map.of(
          "auto", "{\"type\":\"auto\",\"disable_parallel_tool_use\":true}",
          "any", "{\"type\":\"any\"}",
          "tool", "{\"type\":\"tool\",\"name\":\"Write\"}",
          "none", "{\"type\":\"none\"}");

  @Test
  void everyAdmittedFieldPassesAndCountTokensTakesOnlyItsOwn() {
    Set<String> all = new HashSet<>(COUNTED_FIELDS.keySet());
    all.addAll(MESSAGES_FIELDS.keySet());
    assertEquals(MessagesRequests.BODY.names(), all, "a sample for each");
    assertEquals(MessagesRequests.COUNT_TOKENS_BODY.names(), COUNTED_FIELDS.keySet());
    COUNTED_FIELDS.forEach(
        (name, value) -> {
          assertAdmitted(API, "{\"" + name + "\":" + value + "}");
          assertAdmitted(ModelApi.COUNT_TOKENS, "{\"" + name + "\":" + value + "}");
        });
    MESSAGES_FIELDS.forEach(
        (name, value) -> {
          assertAdmitted(API, "{\"" + name + "\":" + value + "}");
          assertRefused(ModelApi.COUNT_TOKENS, "{\"" + name + "\":" + value + "}", name);
        });
  }

  @Test
  void everyAdmittedBlockToolAndToolChoicePasses() {
    assertEquals(MessagesRequests.BLOCKS.admittedValues(), BLOCKS.keySet());
    assertEquals(MessagesRequests.TOOLS.admittedValues(), TOOLS.keySet());
    assertEquals(MessagesRequests.TOOL_CHOICES.admittedValues(), TOOL_CHOICES.keySet());
    assertEachAdmitted(
        API, BLOCKS, block -> "{\"messages\":[{\"role\":\"user\",\"content\":[" + block + "]}]}");
    assertEachAdmitted(API, TOOLS, tool -> "{\"tools\":[" + tool + "]}");
    assertEachAdmitted(API, TOOL_CHOICES, choice -> "{\"tool_choice\":" + choice + "}");
    assertAdmitted(
        API,
        "{\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"document\",\"source\":"
            + "{\"type\":\"base64\",\"media_type\":\"application/pdf\",\"data\":\"JVBERi0=\"}},"
            + "{\"type\":\"document\",\"source\":{\"type\":\"content\",\"content\":["
            + "{\"type\":\"text\",\"text\":\"a\"}]}}]}]}");
  }

  @Test
  void whatClaudeCodeAndTheBuiltinAgentSendPasses() {
    // Claude Code 2.1.328, one call of its agent loop, trimmed (betas go as anthropic-beta).
    assertAdmitted(
        API,
        """
        {"model":"claude-test","max_tokens":32000,"stream":true,"metadata":{"user_id":"user_1"},
         "system":[{"type":"text","text":"You are Claude Code","cache_control":{"type":"ephemeral"}}],
         "thinking":{"type":"adaptive","display":"updates"},"output_config":{"effort":"high"},
         "context_management":{"edits":[{"type":"clear_thinking_20251015","keep":"all"}]},
         "messages":[
          {"role":"system","content":[{"type":"text","text":"env","cache_control":{"type":"ephemeral"}}]},
          {"role":"user","content":[{"type":"text","text":"- Create hello.txt."}]},
          {"role":"assistant","content":[{"type":"text","text":"Writing"},
            {"type":"tool_use","id":"toolu_1","name":"Write","input":{"file_path":"/work/repo/hello.txt"}}]},
          {"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","is_error":true,
            "content":"refused","cache_control":{"type":"ephemeral"}}]}],
         "tools":[{"name":"Write","description":"Writes","input_schema":{"type":"object"}},
          {"name":"DeferredToolPlaceholder","description":"d","input_schema":{},"defer_loading":true}],
         "tool_choice":{"type":"auto"},"temperature":1}
        """);
    // The built-in agent (builtin-agent module, AnthropicMessages).
    assertAdmitted(
        API,
        """
        {"model":"claude-test","max_tokens":8192,"system":"rules",
         "messages":[{"role":"user","content":"task"},
          {"role":"assistant","content":[{"type":"text","text":"reading"},
            {"type":"tool_use","id":"t1","name":"read_file","input":{"path":"README.md"}}]},
          {"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"hello",
            "is_error":true}]}],
         "tools":[{"name":"read_file","description":"Reads","input_schema":{"type":"object"}}]}
        """);
  }

  @Test
  void serverToolsAndRemoteServersAreRefusedNamingTheField() {
    assertRefused(
        API,
        "{\"mcp_servers\":[{\"type\":\"url\",\"url\":\"https://collector.example/sse\",\"name\":\"x\"}]}",
        "mcp_servers");
    assertRefused(API, "{\"container\":\"container_1\"}", "container");
    for (String field :
        List.of(
            "service_tier",
            "speed",
            "inference_geo",
            "fallbacks",
            "fallback_credit_token",
            "diagnostics",
            "betas",
            "user_profile_id",
            "pad")) {
      assertRefused(API, "{\"" + field + "\":\"x\"}", field);
    }
    for (String server :
        List.of(
            "web_search_20250305",
            "web_search_20260318",
            "web_fetch_20250910",
            "web_fetch_20260318",
            "code_execution_20250825",
            "code_execution_20260521",
            "tool_search_tool_regex_20251119",
            "tool_search_tool_bm25_20251119",
            "advisor_20260301",
            "mcp_toolset",
            "browser_toolset_20260801",
            "customweb_fetch",
            "bash_20990101",
            "memory_")) {
      assertRefused(
          API, "{\"tools\":[{\"type\":\"" + server + "\",\"name\":\"t\"}]}", "tools[0].type");
    }
    assertRefused(
        API,
        "{\"tools\":[{\"name\":\"Write\",\"input_schema\":{},\"allowed_callers\":[\"code_execution_20250825\"]}]}",
        "tools[0].allowed_callers");
    assertRefused(API, "{\"tool_choice\":{\"type\":\"web_search\"}}", "tool_choice.type");
    assertRefused(ModelApi.COUNT_TOKENS, "{\"mcp_servers\":[]}", "mcp_servers");
  }

  @Test
  void sourcesGivenByUrlOrUploadedFileAndServerToolBlocksAreRefused() {
    String user = "{\"messages\":[{\"role\":\"user\",\"content\":[%s]}]}";
    String image =
        assertRefused(
            API,
            user.formatted(
                "{\"type\":\"image\",\"source\":{\"type\":\"url\",\"url\":\"https://collector.example/i?r=1\"}}"),
            "messages[0].content[0].source.type");
    assertTrue(image.contains("\"url\""), image);
    assertRefused(
        API,
        user.formatted(
            "{\"type\":\"image\",\"source\":{\"type\":\"file\",\"file_id\":\"file_1\"}}"),
        "messages[0].content[0].source.type");
    assertRefused(
        API,
        user.formatted(
            "{\"type\":\"document\",\"source\":{\"type\":\"url\",\"url\":\"https://collector.example/d.pdf\"}}"),
        "messages[0].content[0].source.type");
    assertRefused(
        API,
        user.formatted("{\"type\":\"document\",\"source\":{\"type\":\"file\",\"file_id\":\"f\"}}"),
        "messages[0].content[0].source.type");
    assertRefused(
        API,
        user.formatted(
            "{\"type\":\"tool_result\",\"tool_use_id\":\"t\",\"content\":[{\"type\":\"image\","
                + "\"source\":{\"type\":\"url\",\"url\":\"http://127.0.0.1/x\"}}]}"),
        "messages[0].content[0].content[0].source.type");
    assertRefused(
        API,
        "{\"system\":[{\"type\":\"image\",\"source\":{\"type\":\"url\",\"url\":\"https://x\"}}]}",
        "system[0].type");
    for (String block :
        List.of(
            "server_tool_use",
            "web_search_tool_result",
            "web_fetch_tool_result",
            "code_execution_tool_result",
            "mcp_tool_use",
            "mcp_tool_result",
            "container_upload",
            "tool_addition")) {
      assertRefused(
          API, user.formatted("{\"type\":\"" + block + "\"}"), "messages[0].content[0].type");
    }
  }
}
