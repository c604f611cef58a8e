package ai.spboucher.spbgit.runner;

import ai.spboucher.spbgit.common.TaskSanitizer;
import ai.spboucher.spbgit.proto.CodingAgent;
import ai.spboucher.spbgit.proto.JobRequest;
import ai.spboucher.spbgit.runner.docker.SandboxSpec;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The specs and environments of a job's containers: one hardening and one set of limits whatever
 * the phase. Plain functions of the {@link JobContext}.
 */
final class JobContainers {

  private JobContainers() {}

  /**
   * A container of the job: only its environment, its socket directory (the setup phase's holds its
   * own proxy only) and, for the agent phase of an llm job, the breach notice differ.
   */
  static SandboxSpec spec(JobContext job, Path socketDir, Map<String, String> env, Path noticeDir) {
    RunnerConfig config = job.config;
    JobRequest request = job.request;
    return SandboxSpec.builder()
        .image(job.admission.image().image())
        .jobId(job.jobId())
        .runnerId(config.runnerId())
        .uid(config.sandboxUid())
        .env(env)
        .cpus(Math.min(limit(request.getLimits().getCpus(), config.cpus()), config.cpus()))
        .memoryBytes((long) limit(request.getLimits().getMemoryBytes(), config.memoryBytes()))
        .pidsLimit((long) limit(request.getLimits().getPids(), config.pidsLimit()))
        .workDir(job.work.dir())
        .egressDir(socketDir)
        .workIsMounted(job.mounted)
        .diskBytes(job.diskLimit())
        .noticeDir(noticeDir)
        .build();
  }

  /**
   * The agent container's environment: no secret at all. The repository is reached through the git
   * relay, which holds the job token; for llm jobs (and exec jobs with {@code exec_model}) the
   * model endpoint holds the provider's key. The task is its visible text only ({@link
   * TaskSanitizer#visible}): the entrypoint writes it into the commit message, where hidden
   * characters or an HTML comment would carry instructions no reviewer sees.
   *
   * @param phase {@code SPB_PHASE}, or null for a job in one container
   */
  static Map<String, String> agentEnvironment(JobContext job, String phase) {
    JobRequest request = job.request;
    Map<String, String> env = new LinkedHashMap<>();
    env.put("SPB_JOB_ID", job.jobId());
    if (phase != null) {
      env.put("SPB_PHASE", phase);
    }
    env.put("SPB_REPO", request.getRepo());
    env.put("SPB_CLONE_URL", SandboxSpec.GIT_URL + job.git.repoPath());
    env.put("SPB_BASE_REF", request.getBaseRef());
    if (!request.getBaseWorkRef().isEmpty()) {
      // A revision: it works on the revised job's work, which that ref held when it was created.
      env.put("SPB_BASE_WORK_REF", request.getBaseWorkRef());
      env.put("SPB_BASE_SHA", request.getBaseSha());
    }
    env.put("SPB_TASK", job.admission.task().text());
    env.put("SPB_MODE", job.llm() ? "llm" : "exec");
    Admission.Agent agent = job.admission.agent();
    if (agent != null) {
      env.put("SPB_AGENT", agent.agent().id());
      // The built-in agent takes the owner's AGENTS.md from here, never from the checkout the job
      // can edit; a CLI agent reads the checkout's file itself.
      if (agent.agent() == CodingAgent.BUILTIN && !request.getInstructions().isEmpty()) {
        env.put("SPB_INSTRUCTIONS", request.getInstructions());
      }
    }
    if (!job.llm() && job.session != null) {
      env.put("SPB_EXEC_MODEL", "1");
    }
    env.put("SPB_EXEC", request.getExecCommand());
    env.put("SPB_TEST_COMMAND", request.getTestCommand());
    if (job.session != null) {
      job.session.addEnvironment(env);
    }
    return env;
  }

  /**
   * The clone phase's environment: the base ref at the owner-trusted commit setup runs on ({@code
   * setup_sha}), never a revision's work, which only the agent phase puts on top: setup runs
   * third-party code with the setup egress, and what it leaves is cached for the default branch's
   * jobs.
   */
  static Map<String, String> cloneEnvironment(JobContext job) {
    Map<String, String> env = agentEnvironment(job, "clone");
    env.remove("SPB_BASE_WORK_REF");
    env.remove("SPB_BASE_SHA");
    if (!job.request.getSetupSha().isEmpty()) {
      env.put("SPB_SETUP_SHA", job.request.getSetupSha());
    }
    return env;
  }

  /** The setup container's environment: the script and nothing of the job's. */
  static Map<String, String> setupEnvironment(JobContext job) {
    Map<String, String> env = new LinkedHashMap<>();
    env.put("SPB_JOB_ID", job.jobId());
    env.put("SPB_PHASE", "setup");
    env.put("SPB_SETUP", job.environment().getSetup());
    return env;
  }

  private static double limit(double asked, double max) {
    return asked > 0 ? Math.min(asked, max) : max;
  }
}
