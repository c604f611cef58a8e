package ai.spboucher.spbgit.gateway.jobs;

import ai.spboucher.spbgit.gateway.errors.RequestException;
import ai.spboucher.spbgit.proto.CodingAgent;
import java.util.Optional;

/**
 * What an owner asks of a new job, as the API received it (checked for shape, not yet for what the
 * gateway allows): empty strings for the fields left out. Their lengths are the API document's.
 *
 * @param task what to do, in words; never empty
 * @param exec the shell command of an exec-mode job; empty for an llm-mode job
 * @param model the model an llm-mode job uses, empty for the default; for an exec-mode job, the
 *     model of the endpoint it asks for, empty for none
 * @param testCommand the command that checks the work; empty for none
 * @param base the branch to start from; empty for {@code main}
 * @param agent the coding agent of an llm-mode job ({@link CodingAgent#id()}); empty for the
 *     built-in one
 */
public record NewJob(
    String task, String exec, String model, String testCommand, String base, String agent) {

  public boolean isExec() {
    return !exec.isBlank();
  }

  /** The branch the job starts from. */
  public String baseBranch() {
    return base.isEmpty() ? "main" : base;
  }

  /**
   * The coding agent the job runs: {@link CodingAgent#BUILTIN} unless named, none for an exec-mode
   * job (its command is its agent).
   *
   * @throws RequestException.Invalid for a name that is no agent, or any agent next to an exec
   *     command
   */
  public Optional<CodingAgent> codingAgent() {
    if (isExec()) {
      if (!agent.isEmpty()) {
        throw new RequestException.Invalid(
            "'agent' applies to llm jobs only; this job has an 'exec' command (an exec job gets"
                + " the model endpoint with 'model')");
      }
      return Optional.empty();
    }
    return Optional.of(
        CodingAgent.of(agent)
            .orElseThrow(
                () ->
                    new RequestException.Invalid(
                        "unknown agent '"
                            + agent
                            + "' ("
                            + String.join(", ", CodingAgent.ids())
                            + ")")));
  }
}
