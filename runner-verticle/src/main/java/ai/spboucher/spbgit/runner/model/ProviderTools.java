package ai.spboucher.spbgit.runner.model;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * Keeps a job's model calls from reaching the network through the provider. Both APIs let a request
 * name tools the provider runs itself: web search and fetch, code execution in the provider's
 * container, remote MCP servers. Such a tool would carry the job's data to any address, or bring
 * any page into it, past the egress allow-list that binds everything else the job does. So a
 * request keeps only the tools the agent runs itself, in the sandbox (its functions and the
 * client-executed tool kinds each API defines); every other tool, and the top-level fields that
 * attach remote servers, are removed before the call is forwarded, and the call's record names what
 * was removed. Removing rather than refusing lets the stock CLIs work: Codex, for one, offers the
 * model its hosted web search on every call.
 *
 * <p>The policy is an allow-list of tool kinds, so a kind a provider adds later is removed until
 * someone decides it is safe. Plain Java, no I/O.
 */
final class ProviderTools {

  /**
   * OpenAI tool types the client executes: chat and Responses functions, free-form custom tools,
   * and the local shell and patch tools Codex runs in the sandbox.
   */
  private static final Set<String> OPENAI_CLIENT_TOOLS =
      Set.of("function", "custom", "local_shell", "shell", "apply_patch");

  /**
   * Anthropic's client-executed tool families (versioned names such as {@code bash_20250124}); a
   * tool without a type, or of type {@code custom}, is the agent's own.
   */
  private static final List<String> ANTHROPIC_CLIENT_TOOL_PREFIXES =
      List.of("custom", "bash_", "text_editor_", "computer_", "memory_");

  /** Top-level fields by which a request attaches provider-side tools or servers. */
  private static final List<String> OPENAI_REMOTE_FIELDS = List.of("web_search_options");

  private static final List<String> ANTHROPIC_REMOTE_FIELDS = List.of("mcp_servers", "container");

  private ProviderTools() {}

  /**
   * Removes from {@code body} every tool the provider would run itself, and the fields attaching
   * remote servers; returns what was removed (tool types and field names), empty when nothing was.
   */
  static List<String> removeProviderSide(ModelApi api, ObjectNode body) {
    boolean anthropic = api == ModelApi.MESSAGES || api == ModelApi.COUNT_TOKENS;
    List<String> removed = new ArrayList<>();
    for (String field : anthropic ? ANTHROPIC_REMOTE_FIELDS : OPENAI_REMOTE_FIELDS) {
      if (body.has(field)) {
        body.remove(field);
        removed.add(field);
      }
    }
    List<String> removedTools = new ArrayList<>();
    removeFrom(body, anthropic, removedTools);
    removed.addAll(removedTools);
    if (choosesRemoved(body.get("tool_choice"), removedTools)) {
      // A choice forcing a removed tool would make the provider refuse the whole call.
      body.remove("tool_choice");
    }
    return removed;
  }

  /** Filters {@code holder}'s {@code tools}, and those of the namespaces among them, in place. */
  private static void removeFrom(JsonNode holder, boolean anthropic, List<String> removed) {
    if (!(holder.get("tools") instanceof ArrayNode tools)) {
      return;
    }
    for (int i = 0; i < tools.size(); ) {
      JsonNode tool = tools.get(i);
      String type = typeOf(tool);
      if (!anthropic && type.equals("namespace")) {
        // Codex groups its own functions under a namespace: what is inside is filtered alike.
        removeFrom(tool, false, removed);
        i++;
      } else if (anthropic ? anthropicClientTool(type) : OPENAI_CLIENT_TOOLS.contains(type)) {
        i++;
      } else {
        tools.remove(i);
        removed.add(type.isEmpty() ? "(no type)" : type);
      }
    }
  }

  private static boolean anthropicClientTool(String type) {
    return type.isEmpty() || ANTHROPIC_CLIENT_TOOL_PREFIXES.stream().anyMatch(type::startsWith);
  }

  private static String typeOf(JsonNode tool) {
    JsonNode type = tool.path("type");
    return type.isTextual() ? type.asText() : "";
  }

  private static boolean choosesRemoved(JsonNode choice, List<String> removed) {
    return choice instanceof ObjectNode object && removed.contains(typeOf(object));
  }
}
