package ai.spboucher.spbgit.runner.model;

import static ai.spboucher.spbgit.runner.model.Admitted.DATA_URL;
import static ai.spboucher.spbgit.runner.model.Admitted.byType;
import static ai.spboucher.spbgit.runner.model.Admitted.fields;
import static ai.spboucher.spbgit.runner.model.Admitted.listOf;
import static ai.spboucher.spbgit.runner.model.Admitted.onlyFalse;
import static ai.spboucher.spbgit.runner.model.Admitted.textOr;

/**
 * What an OpenAI Responses request may hold, as a positive list (docs/sandbox.md, "What a model
 * call may ask for"): the generation parameters; input items that carry the conversation itself
 * (messages, the agent's own tool calls and their outputs, reasoning and compaction items the
 * provider encrypted); parts that are text, or images and files given inline; tools the agent runs
 * itself (function, custom, namespaces of those, local shell, shell in a {@code local} environment,
 * apply_patch). Left out, so refused: every hosted tool (web and file search, code interpreter, a
 * {@code shell} in a provider's container, image generation, remote MCP servers, tool search),
 * {@code background} (the provider works on after the answer, unmetered), {@code
 * previous_response_id}, {@code conversation}, {@code prompt} and item references (state the
 * provider keeps), {@code store: true}, {@code service_tier}, a part given by URL or by an uploaded
 * file's id, and anything the API adds later. Plain Java, no I/O.
 */
final class ResponsesRequests {

  /** The parts a message or a tool's output may hold: text, and media given inline. */
  static final Admitted.Variants PARTS =
      byType()
          .with("input_text", fields("type", "text", "prompt_cache_breakpoint"))
          .with(
              "input_image",
              fields("type", "detail", "prompt_cache_breakpoint").with("image_url", DATA_URL))
          .with(
              "input_file",
              fields("type", "file_data", "filename", "detail", "prompt_cache_breakpoint"))
          .with("output_text", fields("type", "text", "annotations", "logprobs"))
          .with("refusal", fields("type", "refusal"));

  private static final Admitted INPUT_PARTS = textOr(listOf(PARTS));

  private static final Admitted.Fields MESSAGE =
      fields("type", "id", "role", "status", "phase").with("content", INPUT_PARTS);

  /** The sandbox's own environment: the only one a shell may run in. */
  private static final Admitted LOCAL_ENVIRONMENT =
      byType().with("local", fields("type", "skills"));

  /** Input items that carry the conversation, none of them state the provider keeps. */
  static final Admitted.Variants ITEMS =
      byType()
          .untyped(MESSAGE)
          .with("message", MESSAGE)
          .with(
              "function_call",
              fields("type", "id", "call_id", "name", "namespace", "arguments", "status"))
          .with(
              "function_call_output",
              fields("type", "id", "call_id", "name", "namespace", "status")
                  .with("output", INPUT_PARTS))
          .with(
              "custom_tool_call",
              fields("type", "id", "call_id", "name", "namespace", "input", "status"))
          .with(
              "custom_tool_call_output",
              fields("type", "id", "call_id").with("output", INPUT_PARTS))
          .with(
              "reasoning",
              fields("type", "id", "summary", "content", "encrypted_content", "status"))
          .with("compaction", fields("type", "id", "encrypted_content"))
          .with("local_shell_call", fields("type", "id", "call_id", "action", "status"))
          .with("local_shell_call_output", fields("type", "id", "output", "status"))
          .with(
              "shell_call",
              fields("type", "id", "call_id", "action", "status")
                  .with("environment", LOCAL_ENVIRONMENT))
          .with(
              "shell_call_output",
              fields("type", "id", "call_id", "output", "max_output_length", "status"))
          .with("apply_patch_call", fields("type", "id", "call_id", "operation", "status"))
          .with("apply_patch_call_output", fields("type", "id", "call_id", "output", "status"));

  private static final Admitted.Variants OWN_TOOLS =
      byType()
          .with("function", fields("type", "name", "description", "parameters", "strict"))
          .with("custom", fields("type", "name", "description", "format"));

  /** Tools the agent runs itself: the provider only writes their calls. */
  static final Admitted.Variants TOOLS =
      OWN_TOOLS
          .with("namespace", fields("type", "name", "description").with("tools", listOf(OWN_TOOLS)))
          .with("local_shell", fields("type"))
          .with("shell", fields("type").with("environment", LOCAL_ENVIRONMENT))
          .with("apply_patch", fields("type"));

  private static final Admitted.Variants CHOSEN_TOOL =
      byType()
          .with("function", fields("type", "name"))
          .with("custom", fields("type", "name"))
          .with("local_shell", fields("type"))
          .with("shell", fields("type"))
          .with("apply_patch", fields("type"));

  /** A {@code tool_choice} other than a plain string: one of the tools admitted, or a subset. */
  static final Admitted.Variants TOOL_CHOICES =
      CHOSEN_TOOL.with("allowed_tools", fields("type", "mode").with("tools", listOf(CHOSEN_TOOL)));

  /** A request body: {@code POST /v1/responses}. */
  static final Admitted.Fields BODY =
      fields(
              "model",
              "instructions",
              "parallel_tool_calls",
              "max_tool_calls",
              "max_output_tokens",
              "reasoning",
              "text",
              "include",
              "stream",
              "temperature",
              "top_p",
              "top_logprobs",
              "truncation",
              "metadata",
              "client_metadata",
              "user",
              "safety_identifier",
              "prompt_cache_key",
              "prompt_cache_retention",
              "prompt_cache_options",
              "context_management")
          .with("input", textOr(listOf(ITEMS)))
          .with("tools", listOf(TOOLS))
          .with("tool_choice", textOr(TOOL_CHOICES))
          .with("stream_options", fields("include_obfuscation"))
          .with(
              "store",
              onlyFalse(
                  "the provider would keep the response, for calls that continue it outside the"
                      + " job"))
          .with(
              "background",
              onlyFalse(
                  "the provider would answer at once and work on unmetered, outside the job's"
                      + " concurrency"));

  private ResponsesRequests() {}
}
