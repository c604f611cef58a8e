package ai.spboucher.spbgit.runner;

import ai.spboucher.spbgit.proto.JobStatus;
import ai.spboucher.spbgit.runner.nats.BackgroundEvents;
import java.io.IOException;
import java.nio.file.Files;

/**
 * Report: closes the job's sockets, publishes what they recorded, then FINISHED, and removes the
 * job's container, volume and directory. Runs on the job's thread, whatever the earlier phases did.
 */
final class ReportPhase {

  private static final System.Logger LOG = System.getLogger(ReportPhase.class.getName());

  private final JobContext job;

  ReportPhase(JobContext job) {
    this.job = job;
  }

  void run(String reason, String detail) {
    LlmSession session = job.session;
    // Closed before FINISHED, so every model call and egress attempt is metered and published by
    // then.
    JobContext.closeQuietly(session);
    JobContext.closeQuietly(job.git);
    JobContext.closeQuietly(job.proxy);
    JobContext.closeQuietly(job.setupProxy);
    if (session != null && ExitReason.PROVIDER_ERROR.equals(reason)) {
      // Read once the session is closed: by then the call the agent gave up on is recorded.
      detail = session.providerErrorDetail();
      job.pump.runnerLine(detail);
    }
    flush();
    if (session != null) {
      job.pump.runnerLine(session.describeSpend());
    }
    closePump();
    String containerId = job.containerId;
    job.events.status(
        JobStatus.FINISHED,
        reason,
        job.config.runnerId(),
        containerId == null ? "" : containerId,
        detail,
        session == null ? null : session.spend(),
        job.setupFacts.finished());
    cleanUp();
  }

  /**
   * Publishes what the egress proxy and the model endpoint recorded; says so in the log if some was
   * lost.
   */
  private void flush() {
    BackgroundEvents background = job.background;
    try {
      if (!background.close(JobContext.STOP_GRACE)) {
        job.pump.runnerLine(
            "egress and model events still unpublished after "
                + JobContext.STOP_GRACE.toSeconds()
                + " s");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    if (background.dropped() > 0) {
      job.pump.runnerLine(
          background.dropped() + " egress or model events were dropped (too many at once)");
    }
  }

  private void closePump() {
    try {
      job.pump.close(JobContext.STOP_GRACE.toMillis());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private void cleanUp() {
    String containerId = job.containerId;
    if (containerId != null) {
      try {
        job.docker.remove(containerId);
      } catch (RuntimeException e) {
        job.unremovedContainer = containerId;
        LOG.log(
            System.Logger.Level.WARNING,
            "cannot remove container of job "
                + job.jobId()
                + " (removed once the "
                + "engine answers): "
                + e.getMessage());
      }
    }
    if (job.session != null) {
      job.session.deleteNotice();
    }
    job.work.release();
    try {
      Files.deleteIfExists(job.jobDir.resolve("egress"));
      Files.deleteIfExists(job.jobDir);
    } catch (IOException e) {
      LOG.log(System.Logger.Level.WARNING, "cannot remove " + job.jobDir + ": " + e.getMessage());
    }
  }
}
