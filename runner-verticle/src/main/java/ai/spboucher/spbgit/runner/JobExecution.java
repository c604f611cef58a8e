package ai.spboucher.spbgit.runner;

import ai.spboucher.spbgit.proto.CacheOutcome;
import ai.spboucher.spbgit.runner.docker.DockerSandbox;
import java.io.IOException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * One job on this runner, from taking it to removing its containers, as a sequence of phases over
 * one {@link JobContext}: {@link AdmitPhase}, {@link PreparePhase}, for an environment with a setup
 * script {@link CloneOrRestorePhase} and {@link SetupPhase} (skipped on a cache hit), {@link
 * AgentPhase} and {@link ReportPhase}. Output, egress attempts and model calls are streamed as
 * events, and the exit reason is decided from what the runner observed.
 *
 * <p>Threading: {@link #run} blocks for the job's whole life on one worker thread (the dispatcher's
 * job pool), and every phase runs on it, one after the other. The only other thread the run owns is
 * its restorer, which extracts a cache hit keyed by the gateway while the agent container is
 * created; the agent phase waits for it before it starts the container. {@link #cancel} may be
 * called from any thread: it records the reason and kills the current container, and the job's
 * thread ends the job with that reason. {@link #unremovedContainer} is read once {@link #run}
 * returned.
 */
final class JobExecution {

  private static final System.Logger LOG = System.getLogger(JobExecution.class.getName());

  private final JobContext job;

  /** The run of the job {@code job} describes (the dispatcher builds it when it takes the job). */
  JobExecution(JobContext job) {
    this.job = job;
  }

  String jobId() {
    return job.jobId();
  }

  /**
   * Stops the job: its container is killed and it ends with {@code reason} (cancelled or
   * runner_lost). Any thread.
   */
  void cancel(String reason) {
    job.cancelReason = reason;
    String id = job.containerId;
    if (id != null) {
      try {
        job.docker.kill(id);
      } catch (RuntimeException e) {
        // The job's own thread meets the same engine when it ends the job: its end says what
        // happened.
        LOG.log(
            System.Logger.Level.WARNING,
            "job " + jobId() + ": cannot kill its container: " + e.getMessage());
      }
    }
  }

  /**
   * The job's container if {@link #run} could not remove it; null once it is gone or was never
   * created.
   */
  String unremovedContainer() {
    return job.unremovedContainer;
  }

  /** Runs the job through its phases on the calling thread; returns once it is reported. */
  void run() {
    Admission admission = new AdmitPhase(job).run();
    if (admission == null) {
      return;
    }
    job.begin(admission);
    ExecutorService restorer =
        Executors.newSingleThreadExecutor(
            task -> {
              Thread thread = new Thread(task, "cache-restore-" + jobId());
              thread.setDaemon(true);
              return thread;
            });
    JobEnding ending = new JobEnding(ExitReason.RUNNER_ERROR, "");
    try {
      ending = runPhases(restorer);
      job.pump.runnerLine("job ended: " + ending.reason());
    } catch (StoppedFromOutside e) {
      LOG.log(System.Logger.Level.WARNING, "job " + jobId() + ": " + e.getMessage());
      ending = new JobEnding(ExitReason.RUNNER_ERROR, e.getMessage());
      job.pump.runnerLine("runner error: " + ending.detail());
    } catch (Exception e) {
      LOG.log(System.Logger.Level.ERROR, "job " + jobId() + " failed in the runner", e);
      String detail =
          job.containerId != null && lostTheEngine(e)
              ? "lost the Docker engine while the job was running (it stopped or restarted): "
                  + e.getMessage()
              : String.valueOf(e.getMessage());
      ending = new JobEnding(ExitReason.RUNNER_ERROR, detail);
      job.pump.runnerLine("runner error: " + detail);
    } finally {
      restorer.shutdown();
      new ReportPhase(job).run(ending.reason(), ending.detail());
    }
  }

  /** Prepare, clone or restore, setup, agent: the first ending ends the job. */
  private JobEnding runPhases(ExecutorService restorer) throws Exception {
    new PreparePhase(job).run();
    if (job.phased()) {
      JobEnding ending = new CloneOrRestorePhase(job, restorer).run();
      if (ending == null && job.cacheOutcome != CacheOutcome.CACHE_HIT) {
        ending = new SetupPhase(job).run();
      }
      if (ending != null) {
        return ending;
      }
    }
    return new JobEnding(new AgentPhase(job).run(), "");
  }

  /**
   * Whether a failure came from the engine going away rather than from a request it refused: the
   * connection broke (an I/O failure under docker-java's exception), or the engine does not answer
   * any more.
   */
  private boolean lostTheEngine(Exception failure) {
    for (Throwable t = failure; t != null; t = t.getCause()) {
      if (t instanceof IOException || t instanceof DockerSandbox.EngineNotAnswering) {
        return true;
      }
    }
    return !job.docker.answers();
  }
}
