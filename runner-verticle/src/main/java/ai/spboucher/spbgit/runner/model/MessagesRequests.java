package ai.spboucher.spbgit.runner.model;

import static ai.spboucher.spbgit.runner.model.Admitted.byType;
import static ai.spboucher.spbgit.runner.model.Admitted.fields;
import static ai.spboucher.spbgit.runner.model.Admitted.listOf;
import static ai.spboucher.spbgit.runner.model.Admitted.textOr;

import java.util.List;

/**
 * What an Anthropic Messages request (and a {@code count_tokens} request) may hold, as a positive
 * list (docs/sandbox.md, "What a model call may ask for"): the generation parameters, thinking,
 * context management; content blocks that carry the conversation (text, images and documents given
 * inline as base64, text or content blocks, search results the agent supplies, thinking, the
 * agent's own tool uses and results, tool references, compaction); tools the agent runs itself (its
 * own, with or without type {@code custom}, and the client tool families bash, text editor,
 * computer and memory, by their exact versioned names). Left out, so refused: {@code mcp_servers}
 * and {@code container}, every server tool (web search and fetch, code execution, tool search,
 * toolsets, the advisor) and its result blocks, a source given by URL or by an uploaded file's id,
 * {@code service_tier}, {@code speed} and {@code inference_geo} (another price), fallbacks to other
 * models, and anything the API adds later. Plain Java, no I/O.
 */
final class MessagesRequests {

  private static final Admitted.Fields TEXT = fields("type", "text", "cache_control", "citations");

  private static final Admitted IMAGE =
      fields("type", "cache_control")
          .with("source", byType().with("base64", fields("type", "media_type", "data")));

  private static final Admitted DOCUMENT =
      fields("type", "title", "context", "citations", "cache_control")
          .with(
              "source",
              byType()
                  .with(List.of("base64", "text"), fields("type", "media_type", "data"))
                  .with(
                      "content",
                      fields("type")
                          .with(
                              "content",
                              textOr(listOf(byType().with("text", TEXT).with("image", IMAGE))))));

  private static final Admitted SEARCH_RESULT =
      fields("type", "source", "title", "citations", "cache_control")
          .with("content", listOf(byType().with("text", TEXT)));

  private static final Admitted TOOL_REFERENCE = fields("type", "tool_name", "cache_control");

  /** The content blocks a message may hold. */
  static final Admitted.Variants BLOCKS =
      byType()
          .with("text", TEXT)
          .with("image", IMAGE)
          .with("document", DOCUMENT)
          .with("search_result", SEARCH_RESULT)
          .with("thinking", fields("type", "thinking", "signature"))
          .with("redacted_thinking", fields("type", "data"))
          .with("tool_use", fields("type", "id", "name", "input", "cache_control"))
          .with(
              "tool_result",
              fields("type", "tool_use_id", "is_error", "cache_control")
                  .with(
                      "content",
                      textOr(
                          listOf(
                              byType()
                                  .with("text", TEXT)
                                  .with("image", IMAGE)
                                  .with("document", DOCUMENT)
                                  .with("search_result", SEARCH_RESULT)
                                  .with("tool_reference", TOOL_REFERENCE)))))
          .with("tool_reference", TOOL_REFERENCE)
          .with("compaction", fields("type", "content", "encrypted_content", "cache_control"));

  private static final Admitted MESSAGES =
      listOf(fields("role").with("content", textOr(listOf(BLOCKS))));

  private static final Admitted.Fields OWN_TOOL =
      fields(
          "type",
          "name",
          "description",
          "input_schema",
          "cache_control",
          "strict",
          "eager_input_streaming",
          "input_examples",
          "defer_loading");

  private static final Admitted.Fields CLIENT_TOOL =
      fields("type", "name", "cache_control", "strict", "input_examples", "defer_loading");

  /**
   * Tools the agent runs itself, by their exact type: its own, and the versions of the client tool
   * families (bash, text editor, computer, memory) the agent executes in the sandbox.
   */
  static final Admitted.Variants TOOLS =
      byType()
          .untyped(OWN_TOOL)
          .with("custom", OWN_TOOL)
          .with(List.of("bash_20241022", "bash_20250124"), CLIENT_TOOL)
          .with(
              List.of(
                  "text_editor_20241022",
                  "text_editor_20250124",
                  "text_editor_20250429",
                  "text_editor_20250728"),
              CLIENT_TOOL.and("max_characters"))
          .with(
              List.of("computer_20241022", "computer_20250124", "computer_20251124"),
              CLIENT_TOOL.and(
                  "display_width_px", "display_height_px", "display_number", "enable_zoom"))
          .with("memory_20250818", CLIENT_TOOL);

  /** A {@code tool_choice}. */
  static final Admitted.Variants TOOL_CHOICES =
      byType()
          .with(List.of("auto", "any"), fields("type", "disable_parallel_tool_use"))
          .with("tool", fields("type", "name", "disable_parallel_tool_use"))
          .with("none", fields("type"));

  private static final Admitted.Fields COMMON =
      fields(
              "model",
              "cache_control",
              "thinking",
              "context_management",
              "output_config",
              "output_format")
          .with("messages", MESSAGES)
          .with("system", textOr(listOf(byType().with("text", TEXT))))
          .with("tools", listOf(TOOLS))
          .with("tool_choice", TOOL_CHOICES);

  /** A request body: {@code POST /v1/messages}. */
  static final Admitted.Fields BODY =
      COMMON
          .and("max_tokens", "stop_sequences", "stream", "temperature", "top_k", "top_p")
          .with("metadata", fields("user_id"));

  /** A request body: {@code POST /v1/messages/count_tokens}. */
  static final Admitted.Fields COUNT_TOKENS_BODY = COMMON;

  private MessagesRequests() {}
}
