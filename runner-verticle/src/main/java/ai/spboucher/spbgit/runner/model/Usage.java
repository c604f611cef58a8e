package ai.spboucher.spbgit.runner.model;

/** Tokens a provider reported: for one call, or summed over a job. Never negative. */
public record Usage(long inputTokens, long outputTokens) {

  public static final Usage NONE = new Usage(0, 0);

  public Usage {
    if (inputTokens < 0 || outputTokens < 0) {
      throw new IllegalArgumentException("token counts cannot be negative");
    }
  }

  public long total() {
    return inputTokens + outputTokens;
  }

  public Usage plus(Usage other) {
    return new Usage(
        Math.addExact(inputTokens, other.inputTokens),
        Math.addExact(outputTokens, other.outputTokens));
  }
}
