package ai.spboucher.spbgit.runner.model;

import static ai.spboucher.spbgit.runner.model.Admitted.DATA_URL;
import static ai.spboucher.spbgit.runner.model.Admitted.by;
import static ai.spboucher.spbgit.runner.model.Admitted.byType;
import static ai.spboucher.spbgit.runner.model.Admitted.fields;
import static ai.spboucher.spbgit.runner.model.Admitted.listOf;
import static ai.spboucher.spbgit.runner.model.Admitted.onlyFalse;
import static ai.spboucher.spbgit.runner.model.Admitted.textOr;

import java.util.List;

/**
 * What an OpenAI Chat Completions request may hold, as a positive list (docs/sandbox.md, "What a
 * model call may ask for"): the generation parameters, messages whose parts are text, refusals, and
 * images, audio and files given inline ({@code data:} URLs, base64), and tools the agent runs
 * itself (function and custom). Left out, so refused: {@code web_search_options} (the provider
 * searches the web), {@code audio} and {@code modalities}, {@code service_tier} (another price),
 * {@code store: true} (the provider keeps the completion), a part given by URL or by an uploaded
 * file's id, and anything the API adds later. Plain Java, no I/O.
 */
final class ChatCompletionsRequests {

  private static final Admitted TEXT_PART = fields("type", "text", "prompt_cache_breakpoint");

  private static final Admitted TEXT_PARTS = textOr(listOf(byType().with("text", TEXT_PART)));

  /** The parts a user message may hold: text, and media given inline. */
  static final Admitted.Variants PARTS =
      byType()
          .with("text", TEXT_PART)
          .with(
              "image_url",
              fields("type", "prompt_cache_breakpoint")
                  .with("image_url", fields("detail").with("url", DATA_URL)))
          .with(
              "input_audio",
              fields("type", "prompt_cache_breakpoint")
                  .with("input_audio", fields("data", "format")))
          .with(
              "file",
              fields("type", "prompt_cache_breakpoint")
                  .with("file", fields("file_data", "filename")));

  private static final Admitted TOOL_CALLS =
      listOf(
          byType()
              .with("function", fields("id", "type").with("function", fields("name", "arguments")))
              .with("custom", fields("id", "type").with("custom", fields("name", "input"))));

  /** Messages, by their role. */
  static final Admitted.Variants MESSAGES =
      by("role")
          .with(List.of("system", "developer"), fields("role", "name").with("content", TEXT_PARTS))
          .with("user", fields("role", "name").with("content", textOr(listOf(PARTS))))
          .with(
              "assistant",
              fields("role", "name", "refusal")
                  .with(
                      "content",
                      textOr(
                          listOf(
                              byType()
                                  .with("text", TEXT_PART)
                                  .with("refusal", fields("type", "refusal")))))
                  .with("tool_calls", TOOL_CALLS)
                  .with("function_call", fields("name", "arguments")))
          .with("tool", fields("role", "tool_call_id").with("content", TEXT_PARTS))
          .with("function", fields("role", "name", "content"));

  /** Tools the agent runs itself: the provider only writes their calls. */
  static final Admitted.Variants TOOLS =
      byType()
          .with(
              "function",
              fields("type")
                  .with("function", fields("name", "description", "parameters", "strict")))
          .with("custom", fields("type").with("custom", fields("name", "description", "format")));

  private static final Admitted.Variants CHOSEN_TOOL =
      byType()
          .with("function", fields("type").with("function", fields("name")))
          .with("custom", fields("type").with("custom", fields("name")));

  /** A {@code tool_choice} other than a plain string: one of the tools admitted, or a subset. */
  static final Admitted.Variants TOOL_CHOICES =
      CHOSEN_TOOL.with(
          "allowed_tools",
          fields("type").with("allowed_tools", fields("mode").with("tools", listOf(CHOSEN_TOOL))));

  /** A request body: {@code POST /v1/chat/completions}. */
  static final Admitted.Fields BODY =
      fields(
              "model",
              "frequency_penalty",
              "presence_penalty",
              "logit_bias",
              "logprobs",
              "top_logprobs",
              "max_tokens",
              "max_completion_tokens",
              "metadata",
              "n",
              "parallel_tool_calls",
              "prompt_cache_key",
              "prompt_cache_retention",
              "prompt_cache_options",
              "reasoning_effort",
              "response_format",
              "safety_identifier",
              "seed",
              "stop",
              "stream",
              "temperature",
              "top_p",
              "user",
              "verbosity")
          .with("messages", listOf(MESSAGES))
          .with("tools", listOf(TOOLS))
          .with("tool_choice", textOr(TOOL_CHOICES))
          .with("functions", listOf(fields("name", "description", "parameters")))
          .with("function_call", textOr(fields("name")))
          .with("prediction", byType().with("content", fields("type").with("content", TEXT_PARTS)))
          .with("stream_options", fields("include_usage", "include_obfuscation"))
          .with("store", onlyFalse("the provider would keep the completion after the call"));

  private ChatCompletionsRequests() {}
}
