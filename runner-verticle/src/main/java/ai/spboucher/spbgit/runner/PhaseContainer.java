package ai.spboucher.spbgit.runner;

import ai.spboucher.spbgit.runner.docker.DockerSandbox;
import ai.spboucher.spbgit.runner.docker.SandboxSpec;
import com.github.dockerjava.api.command.InspectContainerResponse;
import java.time.Duration;

/**
 * Runs one container of a phase before the agent's (clone, setup) to its end within the job's
 * remaining wall clock, then kills and removes it, so nothing it started outlives it. Its output
 * goes into the job's log. Blocks the job's thread for the container's life.
 */
final class PhaseContainer {

  /** How a phase's container ended: its exit code, or how the runner ended the job meanwhile. */
  record Exit(long exitCode, boolean oomKilled, JobEnding ending) {}

  private final JobContext job;
  private final String phase;

  /**
   * @param phase {@code clone} or {@code setup}: the container's name suffix and log lines
   */
  PhaseContainer(JobContext job, String phase) {
    this.job = job;
    this.phase = phase;
  }

  Exit run(SandboxSpec spec) throws Exception {
    DockerSandbox docker = job.docker;
    String id = docker.create(spec, "-" + phase);
    job.containerId = id;
    ContainerLogs logs = null;
    try {
      if (job.cancelReason != null) {
        return new Exit(-1, false, new JobEnding(job.cancelReason, ""));
      }
      Duration wall = job.remaining();
      job.pump.runnerLine(
          phase
              + " phase starting in container "
              + id.substring(0, 12)
              + " (image "
              + job.admission.image().name()
              + ", "
              + Math.max(0, wall.toSeconds())
              + " s left, egress "
              + ("setup".equals(phase) ? job.setupProxy.policy().entries() : "none")
              + ")");
      logs = ContainerLogs.attach(docker, id, job.pump);
      docker.start(id);
      if ("setup".equals(phase)) {
        job.publishStarted(id);
      }
      Long exit = wall.isNegative() ? null : docker.awaitExit(id, wall);
      if (exit == null) {
        return outOfTime();
      }
      InspectContainerResponse state = docker.inspect(id);
      logs.awaitEnd(JobContext.STOP_GRACE);
      job.pump.runnerLine(phase + " phase ended with exit code " + exit);
      if (job.cancelReason != null) {
        return new Exit(exit, false, new JobEnding(job.cancelReason, ""));
      }
      return new Exit(exit, Boolean.TRUE.equals(state.getState().getOOMKilled()), null);
    } finally {
      removeContainer(id, logs);
    }
  }

  /** The container did not exit in time: the wall clock ran out, or a cancel killed it. */
  private Exit outOfTime() {
    String cancelled = job.cancelReason;
    if (cancelled != null) {
      return new Exit(-1, false, new JobEnding(cancelled, ""));
    }
    job.pump.runnerLine(
        "wall clock limit reached in the " + phase + " phase: stopping the container");
    return new Exit(
        -1,
        false,
        new JobEnding(ExitReason.TIMEOUT, "wall clock limit reached in the " + phase + " phase"));
  }

  private void removeContainer(String id, ContainerLogs logs) {
    job.killedByRunner = true;
    job.docker.kill(id);
    JobContext.closeQuietly(logs);
    try {
      job.docker.remove(id);
      job.containerId = null;
    } catch (RuntimeException e) {
      job.unremovedContainer = id;
      throw e;
    } finally {
      job.killedByRunner = false;
    }
  }
}
