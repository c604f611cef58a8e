package ai.spboucher.spbgit.builtinagent.tools;

/**
 * What one tool call produced.
 *
 * @param content what the model gets back
 * @param error a refusal or failure the model should correct
 * @param detail a few words for the progress line ("2.1 KiB", "exit 0, 312 B")
 */
public record ToolResult(String content, boolean error, String detail) {

  static ToolResult ok(String content, String detail) {
    return new ToolResult(content, false, detail);
  }

  static ToolResult failed(String message) {
    return new ToolResult(message, true, "error: " + message);
  }
}
