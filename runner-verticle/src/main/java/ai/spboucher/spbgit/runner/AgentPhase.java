package ai.spboucher.spbgit.runner;

import ai.spboucher.spbgit.runner.docker.ContainerWatch;
import ai.spboucher.spbgit.runner.docker.DockerSandbox;
import ai.spboucher.spbgit.runner.docker.SandboxSpec;
import ai.spboucher.spbgit.runner.nats.EventMessages;
import com.github.dockerjava.api.command.InspectContainerResponse;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;

/**
 * The agent phase: the agent (or exec command) and the tests in a fresh container, with the job's
 * allow-list, the git relay and, for llm jobs, the model endpoint; on the clone and what setup left
 * when there was a setup phase. Decides the exit reason from what the runner observed. Blocks the
 * job's thread for the container's life; a cancel from another thread kills the container, and this
 * phase then ends with the cancel's reason.
 */
final class AgentPhase {

  private final JobContext job;

  AgentPhase(JobContext job) {
    this.job = job;
  }

  /** The job's exit reason. */
  String run() throws Exception {
    job.phase = EventMessages.PHASE_AGENT;
    boolean phased = job.phased();
    Map<String, String> env = JobContainers.agentEnvironment(job, phased ? "agent" : null);
    if (job.clonesInAgent) {
      // The container clones the commit the cache was keyed on; its git relay attempts are then
      // the agent phase's, as in a job without setup.
      env.put("SPB_CLONE", "1");
      env.put("SPB_BASE_SHA", job.request.getBaseSha());
    }
    LlmSession session = job.session;
    SandboxSpec spec =
        JobContainers.spec(job, job.egressDir, env, session == null ? null : session.noticeDir());
    try {
      job.containerId = job.docker.create(spec);
    } finally {
      // The container may start only on the whole cache, and the volume may be cleaned up only
      // once nothing writes it.
      awaitRestore();
    }
    if (job.cancelReason != null) {
      // Cancelled while the container was being prepared: it never starts.
      job.pump.runnerLine("job ended before it started: " + job.cancelReason);
      return job.cancelReason;
    }
    // A job in one container has its whole wall clock from its start, as before phases; a phased
    // one what is left.
    Duration wall = phased ? job.remaining() : job.admission.wall();
    if (wall.isNegative() || wall.isZero()) {
      job.pump.runnerLine("wall clock limit reached before the agent phase");
      return ExitReason.TIMEOUT;
    }
    return runContainer(wall, phased);
  }

  private String runContainer(Duration wall, boolean phased) throws Exception {
    DockerSandbox docker = job.docker;
    String id = job.containerId;
    ContainerLogs logs = null;
    ContainerWatch watch = null;
    try {
      job.pump.runnerLine(startLine(id, wall, phased));
      logs = ContainerLogs.attach(docker, id, job.pump);
      watch = docker.watch(id);
      docker.start(id);
      job.publishStarted(id);
      return awaitOutcome(wall, watch);
    } finally {
      if (logs != null) {
        logs.awaitEnd(JobContext.STOP_GRACE);
        logs.close();
      }
      JobContext.closeQuietly(watch);
    }
  }

  private String startLine(String id, Duration wall, boolean phased) {
    Admission admission = job.admission;
    return (phased ? "agent phase starting" : "job " + job.jobId() + " starting")
        + " in container "
        + id.substring(0, 12)
        + " on runner "
        + job.config.runnerId()
        + " (image "
        + admission.image().name()
        + ", wall clock limit "
        + wall.toSeconds()
        + " s, egress "
        + job.proxy.policy().entries()
        + (job.session == null ? "" : ", " + job.session.describe())
        + (admission.agent() == null
            ? ""
            : ", agent " + admission.agent().agent().id() + " " + admission.agent().version())
        + ")";
  }

  /** Waits for the restore of a hit keyed by the gateway, if one runs; rethrows its failure. */
  private void awaitRestore() throws IOException, InterruptedException {
    if (job.restoring == null) {
      return;
    }
    try {
      job.restoring.get();
    } catch (ExecutionException e) {
      if (e.getCause() instanceof IOException io) {
        throw io;
      }
      throw new IllegalStateException("cache restore failed", e.getCause());
    } finally {
      job.restoring = null;
    }
  }

  private String awaitOutcome(Duration wall, ContainerWatch watch)
      throws InterruptedException, ExecutionException, StoppedFromOutside {
    DockerSandbox docker = job.docker;
    String id = job.containerId;
    LlmSession session = job.session;
    Long exit =
        session == null
            ? docker.awaitExit(id, wall)
            : session.awaitExit(docker, id, wall, job.config.breachGrace(), job.pump);
    String breach = session == null ? null : session.breach();
    // An llm job warned of its timeout ends timeout even when its agent stopped within the grace
    // period.
    boolean timedOut =
        ExitReason.TIMEOUT.equals(breach)
            || (exit == null && job.cancelReason == null && breach == null);
    if (exit == null) {
      stop(id, wall, timedOut);
    }
    if (job.cancelReason == null && !job.killedByRunner) {
      requireEndedFromWithin(watch);
    }
    InspectContainerResponse state = docker.inspect(id);
    Long exitCode = state.getState().getExitCodeLong();
    String cancelled = job.cancelReason;
    if (cancelled != null) {
      return cancelled;
    }
    return ExitReason.decide(
        new ExitReason.Observation(
            false,
            timedOut,
            session != null && session.budgetExceeded(),
            Boolean.TRUE.equals(state.getState().getOOMKilled()),
            job.work.isFull(),
            exitCode == null ? -1 : exitCode,
            job.llm()));
  }

  /** The container did not exit by itself in time: the runner kills it. */
  private void stop(String id, Duration wall, boolean timedOut) {
    if (timedOut) {
      job.pump.runnerLine(
          "wall clock limit of " + wall.toSeconds() + " s reached: stopping the container");
    } else if (job.cancelReason == null) {
      job.pump.runnerLine("grace period over: stopping the container");
    }
    job.killedByRunner = true;
    job.docker.kill(id);
    job.docker.awaitExit(id, JobContext.STOP_GRACE);
  }

  /**
   * Fails when the engine sent the container a signal that neither the runner nor a cancel asked
   * for: its exit code is then the engine's doing (a stopping or restarting engine sends SIGTERM),
   * not the job's.
   */
  private static void requireEndedFromWithin(ContainerWatch watch)
      throws InterruptedException, StoppedFromOutside {
    // Signals are reported before the death, so once the death is seen, so is every signal.
    watch.awaitDeath(Duration.ofSeconds(5));
    List<String> signals = watch.signals();
    if (!signals.isEmpty()) {
      throw new StoppedFromOutside(
          "the Docker engine stopped the container (signal "
              + String.join(", ", signals)
              + "), not the job or the runner: the engine was stopping or restarting, or someone stopped the container");
    }
  }
}
