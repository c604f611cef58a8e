package ai.spboucher.spbgit.builtinagent;

/**
 * The agent's exit codes, part of the contract with the entrypoint (docker/job-image/spb-agent).
 */
public enum AgentExit {
  /**
   * The model called finish (or stopped calling tools): the entrypoint tests, commits and pushes
   * the proposal.
   */
  FINISHED(0),
  /** The environment is unusable (a variable missing or invalid): nothing was attempted. */
  CONFIGURATION(2),
  /**
   * The runner signalled a breach (/work/.spb/breach) or the proxy answered 429 budget_exceeded.
   */
  STOPPED_BY_RUNNER(75),
  /**
   * The model provider failed: an HTTP error other than a retried rate limit, a timeout, a bad
   * answer.
   */
  PROVIDER_ERROR(76),
  /** The step limit (SPB_AGENT_MAX_STEPS) was reached before the model finished. */
  STEP_LIMIT(77);

  private final int code;

  AgentExit(int code) {
    this.code = code;
  }

  public int code() {
    return code;
  }
}
