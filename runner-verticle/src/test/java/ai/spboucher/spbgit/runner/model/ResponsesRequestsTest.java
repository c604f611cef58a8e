package ai.spboucher.spbgit.runner.model;

import static ai.spboucher.spbgit.runner.model.RequestChecks.assertAdmitted;
import static ai.spboucher.spbgit.runner.model.RequestChecks.assertEachAdmitted;
import static ai.spboucher.spbgit.runner.model.RequestChecks.assertRefused;
import static java.util.Map.entry;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The positive list of OpenAI Responses requests: each admitted thing, and refusals. */
class ResponsesRequestsTest {

  static final ModelApi API = ModelApi.RESPONSES;

  /** Every top-level field admitted, with a value a client sends. */
  static final Map<String, String> FIELDS =
      Map.ofEntries(
          entry("model", "\"gpt-test\""),
          entry("input", "\"hi\""),
          entry("instructions", "\"rules\""),
          entry("parallel_tool_calls", "true"),
          entry("max_tool_calls", "20"),
          entry("max_output_tokens", "8000"),
          entry("reasoning", "{\"effort\":\"high\",\"summary\":\"auto\"}"),
          entry("text", "{\"verbosity\":\"low\",\"format\":{\"type\":\"text\"}}"),
          entry("include", "[\"reasoning.encrypted_content\"]"),
          entry("stream", "true"),
          entry("stream_options", "{\"include_obfuscation\":false}"),
          entry("temperature", "1"),
          entry("top_p", "1"),
          entry("top_logprobs", "0"),
          entry("truncation", "\"disabled\""),
          entry("metadata", "{\"job\":\"a1\"}"),
          entry("client_metadata", "{\"session_id\":\"s\",\"x-codex-window-id\":\"w\"}"),
          entry("user", "\"agent\""),
          entry("safety_identifier", "\"u-1\""),
          entry("prompt_cache_key", "\"01a23c8d\""),
          entry("prompt_cache_retention", "\"24h\""),
          entry("prompt_cache_options", "{\"mode\":\"implicit\"}"),
          entry("context_management", "[{\"type\":\"compaction\",\"compact_threshold\":100000}]"),
          entry("tools", "[{\"type\":\"function\",\"name\":\"exec_command\",\"parameters\":{}}]"),
          entry("tool_choice", "\"auto\""),
          entry("store", "false"),
          entry("background", "false"));

  /** Every input item admitted. */
  static final Map<String, String> ITEMS =
      Map.ofEntries(
          entry(
              "message",
              "{\"type\":\"message\",\"id\":\"msg_1\",\"role\":\"developer\",\"status\":\"completed\","
                  + "\"phase\":\"commentary\",\"content\":[{\"type\":\"input_text\",\"text\":\"rules\"}]}"),
          entry(
              "function_call",
              "{\"type\":\"function_call\",\"id\":\"fc_1\",\"call_id\":\"call_1\",\"name\":\"exec_command\","
                  + "\"namespace\":\"multi_agent_v1\",\"arguments\":\"{}\",\"status\":\"completed\"}"),
          entry(
              "function_call_output",
              "{\"type\":\"function_call_output\",\"id\":\"fco_1\",\"call_id\":\"call_1\",\"name\":\"x\","
                  + "\"namespace\":null,\"status\":\"completed\",\"output\":[{\"type\":\"input_text\","
                  + "\"text\":\"ok\"},{\"type\":\"input_image\",\"image_url\":\"data:image/png;base64,AA==\"}]}"),
          entry(
              "custom_tool_call",
              "{\"type\":\"custom_tool_call\",\"id\":\"ctc\",\"call_id\":\"c2\",\"name\":\"apply_patch\","
                  + "\"namespace\":null,\"input\":\"*** Begin Patch\",\"status\":\"completed\"}"),
          entry(
              "custom_tool_call_output",
              "{\"type\":\"custom_tool_call_output\",\"id\":\"ctco\",\"call_id\":\"c2\",\"output\":\"done\"}"),
          entry(
              "reasoning",
              "{\"type\":\"reasoning\",\"id\":\"rs_1\",\"summary\":[{\"type\":\"summary_text\",\"text\":\"t\"}],"
                  + "\"content\":null,\"encrypted_content\":\"gAAAA\",\"status\":\"completed\"}"),
          entry(
              "compaction",
              "{\"type\":\"compaction\",\"id\":\"cmp\",\"encrypted_content\":\"gAAAA\"}"),
          entry(
              "local_shell_call",
              "{\"type\":\"local_shell_call\",\"id\":\"ls\",\"call_id\":\"c3\",\"status\":\"completed\","
                  + "\"action\":{\"type\":\"exec\",\"command\":[\"ls\"],\"env\":{}}}"),
          entry(
              "local_shell_call_output",
              "{\"type\":\"local_shell_call_output\",\"id\":\"c3\",\"output\":\"a\",\"status\":\"completed\"}"),
          entry(
              "shell_call",
              "{\"type\":\"shell_call\",\"id\":\"sh\",\"call_id\":\"c4\",\"status\":\"completed\","
                  + "\"action\":{\"commands\":[\"ls\"]},\"environment\":{\"type\":\"local\"}}"),
          entry(
              "shell_call_output",
              "{\"type\":\"shell_call_output\",\"id\":\"sho\",\"call_id\":\"c4\",\"max_output_length\":100,"
                  + "\"status\":\"completed\",\"output\":[{\"stdout\":\"a\",\"stderr\":\"\","
                  + "\"outcome\":{\"type\":\"exit\",\"exit_code\":0}}]}"),
          entry(
              "apply_patch_call",
              "{\"type\":\"apply_patch_call\",\"id\":\"ap\",\"call_id\":\"c5\",\"status\":\"completed\","
                  + "\"operation\":{\"type\":\"create_file\",\"path\":\"a\",\"diff\":\"+a\"}}"),
          entry(
              "apply_patch_call_output",
              "{\"type\":\"apply_patch_call_output\",\"id\":\"apo\",\"call_id\":\"c5\",\"status\":\"completed\","
                  + "\"output\":\"done\"}"));

  static final Map<String, String> PARTS =
      Map.of(
          "input_text", "{\"type\":\"input_text\",\"text\":\"hi\"}",
          "input_image",
              "{\"type\":\"input_image\",\"detail\":\"auto\",\"image_url\":\"data:image/png;base64,AA==\"}",
          "input_file",
              "{\"type\":\"input_file\",\"filename\":\"a.pdf\",\"file_data\":\"data:application/pdf;"
                  + "base64,JVBERi0=\",\"detail\":\"high\"}",
          "output_text",
              "{\"type\":\"output_text\",\"text\":\"ok\",\"annotations\":[],\"logprobs\":[]}",
          "refusal", "{\"type\":\"refusal\",\"refusal\":\"no\"}");

  static final Map<String, String> TOOLS =
      Map.of(
          "function",
          "{\"type\":\"function\",\"name\":\"exec_command\",\"description\":\"d\",\"parameters\":{},"
              + "\"strict\":false}",
          "custom",
          "{\"type\":\"custom\",\"name\":\"apply_patch\",\"description\":\"d\",\"format\":"
              + "{\"type\":\"grammar\",\"syntax\":\"lark\",\"definition\":\"start: x\"}}",
          "namespace",
          "{\"type\":\"namespace\",\"name\":\"multi_agent_v1\",\"description\":\"d\",\"tools\":["
              + "{\"type\":\"function\",\"name\":\"spawn_agent\",\"parameters\":{},\"strict\":false}]}",
          "local_shell",
          "{\"type\":\"local_shell\"}",
          "shell",
          "{\"type\":\"shell\",\"environment\":{\"type\":\"local\",\"skills\":[]}}",
          "apply_patch",
          "{\"type\":\"apply_patch\"}");

  static final Map<String, String> TOOL_CHOICES =
      Map.of(
          "function", "{\"type\":\"function\",\"name\":\"exec_command\"}",
          "custom", "{\"type\":\"custom\",\"name\":\"apply_patch\"}",
          "local_shell", "{\"type\":\"local_shell\"}",
          "shell", "{\"type\":\"shell\"}",
          "apply_patch", "{\"type\":\"apply_patch\"}",
          "allowed_tools",
              "{\"type\":\"allowed_tools\",\"mode\":\"required\",\"tools\":[{\"type\":\"function\","
                  + "\"name\":\"exec_command\"}]}");

  @Test
  void everyAdmittedFieldPasses() {
    assertEquals(ResponsesRequests.BODY.names(), FIELDS.keySet(), "a sample for each");
    FIELDS.forEach((name, value) -> assertAdmitted(API, "{\"" + name + "\":" + value + "}"));
  }

  @Test
  void everyAdmittedItemPartToolAndToolChoicePasses() {
    assertEquals(ResponsesRequests.ITEMS.admittedValues(), ITEMS.keySet());
    assertEquals(ResponsesRequests.PARTS.admittedValues(), PARTS.keySet());
    assertEquals(ResponsesRequests.TOOLS.admittedValues(), TOOLS.keySet());
    assertEquals(ResponsesRequests.TOOL_CHOICES.admittedValues(), TOOL_CHOICES.keySet());
    assertEachAdmitted(API, ITEMS, item -> "{\"input\":[" + item + "]}");
    assertEachAdmitted(
        API, PARTS, part -> "{\"input\":[{\"role\":\"user\",\"content\":[" + part + "]}]}");
    assertEachAdmitted(API, TOOLS, tool -> "{\"tools\":[" + tool + "]}");
    assertEachAdmitted(API, TOOL_CHOICES, choice -> "{\"tool_choice\":" + choice + "}");
    assertAdmitted(API, "{\"input\":[{\"role\":\"user\",\"content\":\"an untyped message\"}]}");
  }

  /**
   * One call of Codex 0.169.0's agent loop, trimmed (docs/agents.md, "codex"), with {@code
   * hostedTool} as its third tool when not empty.
   */
  private static String codexCall(String hostedTool) {
    return """
        {"model":"gpt-test","stream":true,"store":false,"parallel_tool_calls":true,
         "include":["reasoning.encrypted_content"],"prompt_cache_key":"01a23c8d","tool_choice":"auto",
         "reasoning":{"summary":"auto"},"instructions":"You are Codex",
         "client_metadata":{"session_id":"s","turn_id":"t","x-codex-turn-metadata":"{}"},
         "input":[
          {"type":"message","id":"m1","role":"developer","content":[{"type":"input_text","text":"rules"}]},
          {"type":"message","id":"m2","role":"user","content":[{"type":"input_text","text":"- Create hello.txt."}]},
          {"type":"function_call","id":"fc1","call_id":"call_1","name":"exec_command","arguments":"{}","status":"completed"},
          {"type":"function_call_output","id":"o1","call_id":"call_1","output":"done"}],
         "tools":[
          {"type":"function","name":"exec_command","description":"Runs","strict":false,"parameters":{}},
          {"type":"namespace","name":"multi_agent_v1","description":"Agents","tools":[
            {"type":"function","name":"spawn_agent","description":"Spawns","strict":false,"parameters":{}}]},
          %s{"type":"function","name":"update_goal","description":"Goal","strict":false,"parameters":{}}]}
        """
        .formatted(hostedTool.isEmpty() ? "" : hostedTool + ",");
  }

  @Test
  void whatCodexSendsWithItsWebSearchDisabledIsAdmittedUnchanged() {
    assertAdmitted(API, codexCall(""));
  }

  @Test
  void codexsHostedWebSearchIsRefusedLikeAnyHostedTool() {
    String message =
        assertRefused(
            API,
            codexCall("{\"type\":\"web_search\",\"external_web_access\":true}"),
            "tools[2].type");
    assertTrue(message.contains("\"web_search\""), message);
  }

  @Test
  void workThatWouldGoOnOutsideTheJobIsRefused() {
    String background = assertRefused(API, "{\"background\":true}", "background");
    assertTrue(background.contains("unmetered"), background);
    assertRefused(API, "{\"previous_response_id\":\"resp_123\"}", "previous_response_id");
    assertRefused(API, "{\"conversation\":\"conv_123\"}", "conversation");
    assertRefused(API, "{\"prompt\":{\"id\":\"pmpt_1\"}}", "prompt");
    String stored = assertRefused(API, "{\"store\":true}", "store");
    assertTrue(stored.contains("only be false"), stored);
    assertRefused(
        API, "{\"input\":[{\"type\":\"item_reference\",\"id\":\"msg_1\"}]}", "input[0].type");
  }

  @Test
  void providerSideFeaturesAndUnknownFieldsAreRefusedNamingTheField() {
    assertRefused(API, "{\"service_tier\":\"priority\"}", "service_tier");
    assertRefused(API, "{\"moderation\":{}}", "moderation");
    assertRefused(API, "{\"max_tokens\":100}", "max_tokens");
    for (String hosted :
        List.of(
            "web_search",
            "web_search_preview",
            "web_search_2025_08_26",
            "file_search",
            "code_interpreter",
            "image_generation",
            "mcp",
            "computer_use_preview",
            "computer",
            "tool_search",
            "programmatic_tool_calling")) {
      assertRefused(API, "{\"tools\":[{\"type\":\"" + hosted + "\"}]}", "tools[0].type");
    }
    assertRefused(
        API,
        "{\"tools\":[{\"type\":\"shell\",\"environment\":{\"type\":\"container_auto\","
            + "\"network_policy\":{\"type\":\"allowlist\",\"allowed_domains\":[\"collector.example\"]}}}]}",
        "tools[0].environment.type");
    assertRefused(
        API,
        "{\"tools\":[{\"type\":\"shell\",\"environment\":{\"type\":\"container_reference\","
            + "\"container_id\":\"cntr_1\"}}]}",
        "tools[0].environment.type");
    assertRefused(
        API,
        "{\"tools\":[{\"type\":\"namespace\",\"name\":\"n\",\"tools\":[{\"type\":\"web_search\"}]}]}",
        "tools[0].tools[0].type");
    assertRefused(
        API,
        "{\"tools\":[{\"type\":\"function\",\"name\":\"f\",\"allowed_callers\":[\"programmatic\"]}]}",
        "tools[0].allowed_callers");
    assertRefused(API, "{\"tool_choice\":{\"type\":\"web_search\"}}", "tool_choice.type");
    assertRefused(
        API, "{\"tool_choice\":{\"type\":\"mcp\",\"server_label\":\"x\"}}", "tool_choice.type");
  }

  @Test
  void itemsOfHostedToolsAndContentGivenByUrlOrUploadedFileAreRefused() {
    for (String item :
        List.of(
            "web_search_call",
            "file_search_call",
            "computer_call",
            "computer_call_output",
            "image_generation_call",
            "code_interpreter_call",
            "mcp_call",
            "mcp_list_tools",
            "mcp_approval_response",
            "additional_tools",
            "tool_search_call",
            "compaction_trigger")) {
      assertRefused(API, "{\"input\":[{\"type\":\"" + item + "\"}]}", "input[0].type");
    }
    String user = "{\"input\":[{\"role\":\"user\",\"content\":[%s]}]}";
    String message =
        assertRefused(
            API,
            user.formatted(
                "{\"type\":\"input_image\",\"image_url\":\"https://collector.example/p.png?d=secret\"}"),
            "input[0].content[0].image_url");
    assertTrue(message.contains("data: URL"), message);
    assertRefused(
        API,
        user.formatted("{\"type\":\"input_image\",\"file_id\":\"file-1\"}"),
        "input[0].content[0].file_id");
    assertRefused(
        API,
        user.formatted(
            "{\"type\":\"input_file\",\"file_url\":\"https://collector.example/f.pdf\"}"),
        "input[0].content[0].file_url");
    assertRefused(
        API,
        user.formatted("{\"type\":\"input_file\",\"file_id\":\"file-1\"}"),
        "input[0].content[0].file_id");
    assertRefused(
        API,
        "{\"input\":[{\"type\":\"function_call_output\",\"call_id\":\"c\",\"output\":["
            + "{\"type\":\"input_image\",\"image_url\":\"http://127.0.0.1/x\"}]}]}",
        "input[0].output[0].image_url");
    assertRefused(
        API,
        "{\"input\":[{\"type\":\"shell_call\",\"call_id\":\"c\",\"environment\":"
            + "{\"type\":\"container_reference\",\"container_id\":\"cntr\"}}]}",
        "input[0].environment.type");
  }
}
