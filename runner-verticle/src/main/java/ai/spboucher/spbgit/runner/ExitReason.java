package ai.spboucher.spbgit.runner;

/**
 * Why a job ended, decided from what the runner observed itself (its timer, the cancel request, its
 * model meter, the kernel's OOM flag, the work volume, the exit code), never from anything the
 * container printed.
 */
public final class ExitReason {

  public static final String OK = "ok";
  public static final String OOM = "oom";
  public static final String TIMEOUT = "timeout";
  public static final String DISK_LIMIT = "disk_limit";
  public static final String CANCELLED = "cancelled";
  public static final String RUNNER_LOST = "runner_lost";
  public static final String RUNNER_ERROR = "runner_error";

  /** An llm job whose model spend reached its token budget (the runner's own meter). */
  public static final String BUDGET_EXCEEDED = "budget_exceeded";

  /** An llm job whose agent exited {@link #AGENT_PROVIDER_ERROR}. */
  public static final String PROVIDER_ERROR = "provider_error";

  /** An llm job whose agent exited {@link #AGENT_STEP_LIMIT}. */
  public static final String STEP_LIMIT = "step_limit";

  /**
   * The environment's setup script exited non-zero (the detail names its code): the agent phase
   * never ran and nothing was pushed.
   */
  public static final String SETUP_FAILED = "setup_failed";

  /**
   * An llm job whose coding agent this runner cannot run, refused before anything ran: the job's
   * image does not carry it ({@code spb.agent.clis}), or it speaks another API than the runner's
   * provider. The detail names the image, the agent and the provider.
   */
  public static final String AGENT_UNAVAILABLE = "agent_unavailable";

  /**
   * An llm job whose coding-agent CLI exited non-zero on its own (the entrypoint's {@link
   * #AGENT_CLI_FAILED}): its output in the log says why; its work, if any, is the partial ref.
   */
  public static final String AGENT_FAILED = "agent_failed";

  /** The llm agent's exit code for "stopped on the runner's breach notice, partial work pushed". */
  public static final int AGENT_STOPPED_ON_BREACH = 75;

  /** The llm agent's exit code for "the provider kept failing". */
  public static final int AGENT_PROVIDER_ERROR = 76;

  /** The llm agent's exit code for "ran out of steps". */
  public static final int AGENT_STEP_LIMIT = 77;

  /** The entrypoint's exit code for "the coding-agent CLI failed, partial work pushed". */
  public static final int AGENT_CLI_FAILED = 78;

  private ExitReason() {}

  /**
   * What the runner saw when the container stopped.
   *
   * @param budgetExceeded the runner's meter reached the job's token budget
   * @param llm the job ran a coding agent, whose exit codes 76, 77 and 78 have a meaning
   */
  public record Observation(
      boolean cancelled,
      boolean timedOut,
      boolean budgetExceeded,
      boolean oomKilled,
      boolean workVolumeFull,
      long exitCode,
      boolean llm) {

    /** An exec job's observation. */
    public Observation(
        boolean cancelled,
        boolean timedOut,
        boolean oomKilled,
        boolean workVolumeFull,
        long exitCode) {
      this(cancelled, timedOut, false, oomKilled, workVolumeFull, exitCode, false);
    }
  }

  /**
   * The first applicable reason, in order: the runner's own decisions (cancel, timeout, budget),
   * then breaches the kernel reports (oom, a full work volume with a failing exit), then the exit
   * code; for llm jobs the agent's codes 76, 77 and 78 name their reason (75, "stopped on a
   * breach", means something only together with the runner's own breach, which is decided above).
   */
  public static String decide(Observation o) {
    if (o.cancelled()) {
      return CANCELLED;
    }
    if (o.timedOut()) {
      return TIMEOUT;
    }
    if (o.budgetExceeded()) {
      return BUDGET_EXCEEDED;
    }
    if (o.oomKilled()) {
      return OOM;
    }
    if (o.exitCode() != 0 && o.workVolumeFull()) {
      return DISK_LIMIT;
    }
    if (o.exitCode() == 0) {
      return OK;
    }
    if (o.llm() && o.exitCode() == AGENT_PROVIDER_ERROR) {
      return PROVIDER_ERROR;
    }
    if (o.llm() && o.exitCode() == AGENT_STEP_LIMIT) {
      return STEP_LIMIT;
    }
    if (o.llm() && o.exitCode() == AGENT_CLI_FAILED) {
      return AGENT_FAILED;
    }
    return "exit_code:" + o.exitCode();
  }
}
