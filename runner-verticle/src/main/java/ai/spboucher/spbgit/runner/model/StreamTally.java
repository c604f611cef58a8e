package ai.spboucher.spbgit.runner.model;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * What one call's answer has reported of its usage so far, and an estimate of what it has not yet
 * reported: input as the request's bytes / 4 until the provider names it, output as the generated
 * text's bytes / 4 (about four bytes a token for English text and code), whichever is larger.
 *
 * <p>Threading: confined to the event loop of the call.
 */
final class StreamTally {

  private final long requestBytes;
  private long input;
  private long output;
  private boolean inputReported;
  private boolean outputReported;
  private long textBytes;

  StreamTally(long requestBytes) {
    this.requestBytes = requestBytes;
  }

  void reportInput(long tokens) {
    input = tokens;
    inputReported = true;
  }

  void reportOutput(long tokens) {
    output = Math.max(output, tokens);
    outputReported = true;
  }

  /** Whether the provider reported both input and output. */
  boolean complete() {
    return inputReported && outputReported;
  }

  /** Counts the generated text of a delta field (nothing when it is absent or not text). */
  void addText(JsonNode field) {
    if (field.isTextual()) {
      String text = field.textValue();
      // UTF-8 length without encoding: close enough for an estimate.
      textBytes += text.length();
    }
  }

  /** Counts generated text already measured, in chars (see {@link #addText}). */
  void addTextChars(long chars) {
    textBytes += chars;
  }

  /** What the provider reported, nothing estimated: the usage of a stream that ended normally. */
  Usage reported() {
    return new Usage(input, output);
  }

  /**
   * The reported usage where the provider reported it, the estimate elsewhere: what a stream cut or
   * dropped before its last event is counted at.
   */
  Usage estimate() {
    return new Usage(
        inputReported ? input : (requestBytes + 3) / 4, Math.max(output, (textBytes + 3) / 4));
  }
}
