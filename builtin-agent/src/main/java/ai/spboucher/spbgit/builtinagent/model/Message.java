package ai.spboucher.spbgit.builtinagent.model;

import java.util.List;

/**
 * One entry of the provider-neutral transcript. Each provider renders the transcript in its own
 * wire format on every request, so the agent loop never sees either format.
 */
public sealed interface Message
    permits Message.UserText, Message.AssistantTurn, Message.ToolResults {

  /**
   * Text the harness sends as the user: the delimited task, or a fixed nudge. Never repository
   * content.
   */
  record UserText(String text) implements Message {}

  /**
   * One reply of the model.
   *
   * @param text its text, possibly empty
   * @param calls the tools it asked for, in order
   * @param truncated true when the reply was cut off at the output token limit
   */
  record AssistantTurn(String text, List<ToolCall> calls, boolean truncated) implements Message {
    public AssistantTurn {
      text = text == null ? "" : text;
      calls = List.copyOf(calls);
    }
  }

  /** The results of the calls of the preceding {@link AssistantTurn}, in the same order. */
  record ToolResults(List<ToolOutput> outputs) implements Message {
    public ToolResults {
      outputs = List.copyOf(outputs);
    }
  }

  /**
   * A tool call as the model wrote it.
   *
   * @param arguments the arguments as raw JSON text, not validated (a model can write anything)
   */
  record ToolCall(String id, String name, String arguments) {}

  /**
   * What a tool call returned; {@code error} marks a refusal or a failure the model should correct.
   */
  record ToolOutput(String callId, String content, boolean error) {}
}
