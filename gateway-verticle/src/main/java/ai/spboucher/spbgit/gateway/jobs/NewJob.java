package ai.spboucher.spbgit.gateway.jobs;

/**
 * What an owner asks of a new job, as the API received it (checked for shape, not yet for what the
 * gateway allows): empty strings for the fields left out.
 *
 * @param task what to do, in words; never empty
 * @param exec the shell command of an exec-mode job; empty for an llm-mode job
 * @param model the model an llm-mode job uses; empty for the default
 * @param testCommand the command that checks the work; empty for none
 * @param base the branch to start from; empty for {@code main}
 */
public record NewJob(String task, String exec, String model, String testCommand, String base) {

  /** The longest task, in characters. */
  public static final int MAX_TASK_LENGTH = 20_000;

  /** The longest exec or test command, in characters. */
  public static final int MAX_COMMAND_LENGTH = 20_000;

  /** The longest model or base branch name, in characters. */
  public static final int MAX_NAME_LENGTH = 200;

  public boolean isExec() {
    return !exec.isBlank();
  }

  /** The branch the job starts from. */
  public String baseBranch() {
    return base.isEmpty() ? "main" : base;
  }
}
