package ai.spboucher.spbgit.runner.model;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;
import org.junit.jupiter.api.Test;

/** What a model call may ask the provider to run on the job's behalf. */
class ProviderToolsTest {

  static final ObjectMapper JSON = new ObjectMapper();

  static ObjectNode body(String json) throws Exception {
    return (ObjectNode) JSON.readTree(json);
  }

  static List<String> types(ObjectNode body) {
    return body.path("tools").findValuesAsText("type");
  }

  @Test
  void responsesKeepTheAgentsOwnToolsAndLoseTheHostedOnes() throws Exception {
    ObjectNode request =
        body(
            "{\"tools\":[{\"type\":\"function\",\"name\":\"exec_command\"},{\"type\":\"web_search\"},"
                + "{\"type\":\"custom\",\"name\":\"apply_patch\"},{\"type\":\"mcp\",\"server_url\":"
                + "\"https://attacker.example\"},{\"type\":\"local_shell\"},{\"type\":\"code_interpreter\"},"
                + "{\"type\":\"file_search\"},{\"type\":\"image_generation\"},{\"type\":\"some_future_tool\"}],"
                + "\"tool_choice\":{\"type\":\"web_search\"}}");

    List<String> removed = ProviderTools.removeProviderSide(ModelApi.RESPONSES, request);

    assertEquals(
        List.of(
            "web_search",
            "mcp",
            "code_interpreter",
            "file_search",
            "image_generation",
            "some_future_tool"),
        removed);
    assertEquals(List.of("function", "custom", "local_shell"), types(request));
    assertFalse(request.has("tool_choice"), "a choice of a removed tool would fail the call");
  }

  @Test
  void chatCompletionsKeepFunctionsAndLoseWebSearchOptions() throws Exception {
    ObjectNode request =
        body(
            "{\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"write_file\"}},{\"name\":\"x\"}],"
                + "\"web_search_options\":{},\"tool_choice\":\"auto\"}");

    List<String> removed = ProviderTools.removeProviderSide(ModelApi.CHAT_COMPLETIONS, request);

    assertEquals(List.of("web_search_options", "(no type)"), removed);
    assertEquals(List.of("function"), types(request));
    assertEquals("auto", request.path("tool_choice").asText(), "an unrelated choice stays");
  }

  @Test
  void anthropicKeepsClientToolsAndLosesServerToolsAndMcpServers() throws Exception {
    ObjectNode request =
        body(
            "{\"tools\":[{\"name\":\"Write\",\"input_schema\":{}},{\"type\":\"custom\",\"name\":\"Edit\"},"
                + "{\"type\":\"bash_20250124\",\"name\":\"bash\"},{\"type\":\"text_editor_20250728\"},"
                + "{\"type\":\"web_search_20250305\",\"name\":\"web_search\"},{\"type\":\"web_fetch_20250910\"},"
                + "{\"type\":\"code_execution_20250825\"}],"
                + "\"mcp_servers\":[{\"type\":\"url\",\"url\":\"https://attacker.example/sse\"}],"
                + "\"container\":\"c1\"}");

    List<String> removed = ProviderTools.removeProviderSide(ModelApi.MESSAGES, request);

    assertEquals(
        List.of(
            "mcp_servers",
            "container",
            "web_search_20250305",
            "web_fetch_20250910",
            "code_execution_20250825"),
        removed);
    assertEquals(List.of("custom", "bash_20250124", "text_editor_20250728"), types(request));
    assertEquals(4, request.path("tools").size(), "the untyped Write tool stays too");
    assertFalse(request.has("mcp_servers"));
  }

  @Test
  void aNamespaceOfFunctionsStaysAndAHostedToolInsideItGoes() throws Exception {
    ObjectNode request =
        body(
            "{\"tools\":[{\"type\":\"namespace\",\"name\":\"multi_agent_v1\",\"tools\":["
                + "{\"type\":\"function\",\"name\":\"spawn\"},{\"type\":\"web_search\"}]}]}");

    assertEquals(
        List.of("web_search"), ProviderTools.removeProviderSide(ModelApi.RESPONSES, request));
    assertEquals(List.of("namespace", "function"), types(request));
  }

  @Test
  void aRequestWithoutProviderToolsIsLeftAlone() throws Exception {
    ObjectNode request =
        body("{\"tools\":[{\"type\":\"function\",\"name\":\"f\"}],\"stream\":true}");
    String before = request.toString();

    assertTrue(ProviderTools.removeProviderSide(ModelApi.RESPONSES, request).isEmpty());
    assertEquals(before, request.toString());
  }
}
