package ai.spboucher.spbgit.gateway.jobs;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

/**
 * A {@link Job} in its API form: the fields {@code GET /api/jobs/{id}} and every list of jobs show.
 */
final class JobView {

  private JobView() {}

  /**
   * The API form; {@code work} is where the job's proposal and partial refs point now, read by the
   * caller. {@code partial_sha} is set whenever the partial ref exists, also next to a proposal
   * (which an owner's push could add): the page reviews the proposal then.
   */
  static JsonObject of(Job job, WorkShas work) {
    String proposalSha = work.proposal();
    return new JsonObject()
        .put("id", job.id())
        .put("repo", job.repo())
        .put("task", job.task())
        .put("exec", job.execCommand())
        .put("test_command", job.testCommand())
        .put("base", job.baseRef())
        .put("base_sha", job.baseSha())
        .put("status", job.status())
        .put("exit_reason", job.exitReason())
        .put("runner_id", job.runnerId())
        .put("container_id", job.containerId())
        .put("created_at", job.createdAt())
        .put("started_at", job.startedAt())
        .put("finished_at", job.finishedAt())
        .put("detail", job.detail())
        .put("deadline", job.deadline())
        .put("refs_written", new JsonArray(job.refsWritten()))
        .put("mode", job.isExec() ? "exec" : "llm")
        .put("model", job.model())
        .put("agent", job.agent())
        .put("agent_version", job.agentVersion())
        .put("exec_model", job.execModel())
        .put("provider", job.spend() == null ? null : job.spend().provider())
        .put("spend", job.spend() == null ? null : job.spend().toJson())
        .put("proposal_sha", proposalSha)
        .put("partial_sha", work.partial())
        .put("test_result", testResult(job, proposalSha))
        .put("decision", job.decision())
        .put("environment", job.environment())
        .put("image_digest", job.imageDigest())
        .put("cache", job.cache())
        .put("instructions_blob", job.instructionsBlob())
        .put("waiting_for", waitingFor(job))
        .put("group", job.group())
        .put("revision", job.revision() == null ? 1 : job.revision().number())
        .put("revises", job.revision() == null ? null : job.revision().revises())
        .put("revises_work", job.revision() == null ? null : job.revision().work())
        .put("original_base_sha", job.originalBaseSha())
        .put("review", job.revision() == null ? null : job.revision().review())
        .put("revised_by", job.revisedBy())
        .put("setup", job.setup());
  }

  /**
   * What a queued job waits for: the gateway does not know every runner's catalogue, so it says
   * what would take the job rather than whether one exists. Null once a runner has it.
   */
  private static String waitingFor(Job job) {
    return job.state() == JobState.DISPATCHED
        ? "a runner offering image '" + job.image() + "'"
        : null;
  }

  /**
   * Passed or failed when a test command ran: the agent's entrypoint exits with the test command's
   * code and pushes a proposal only after the exec command succeeded, so a failing exit with a
   * proposal means the tests failed. Null when there was no test command or the job has not ended.
   */
  private static String testResult(Job job, String proposalSha) {
    if (job.testCommand() == null
        || job.testCommand().isBlank()
        || !job.isFinished()
        || job.exitReason() == null) {
      return null;
    }
    if ("ok".equals(job.exitReason())) {
      return "passed";
    }
    return job.exitReason().startsWith("exit_code:") && proposalSha != null ? "failed" : null;
  }
}
