package ai.spboucher.spbgit.runner;

import ai.spboucher.spbgit.common.TaskSanitizer;
import ai.spboucher.spbgit.proto.CodingAgent;
import ai.spboucher.spbgit.proto.JobRequest;
import ai.spboucher.spbgit.proto.JobStatus;
import ai.spboucher.spbgit.proto.Subjects;
import java.time.Duration;
import java.time.Instant;

/**
 * Admit: refuses a job this runner cannot run (no such model, an invisible task, an image it does
 * not offer, a coding agent the image lacks or the provider does not speak) or that is past its
 * deadline, publishing FINISHED. Runs on the job's thread; reads the image's labels from the
 * engine.
 */
final class AdmitPhase {

  private final JobContext job;

  AdmitPhase(JobContext job) {
    this.job = job;
  }

  /** The admission, or null when the job was refused (its FINISHED is published). */
  Admission run() {
    JobRequest request = job.request;
    String model;
    TaskSanitizer.Sanitized task = TaskSanitizer.visible(request.getTask());
    ImageCatalogue.Offered image;
    Admission.Agent agent;
    try {
      model = job.usesModel() ? jobModel() : null;
      if (job.llm() && task.text().isEmpty()) {
        throw new IllegalArgumentException(
            "the task has no visible text once its hidden characters and HTML "
                + "comments are removed");
      }
      String name =
          job.environment().getImage().isEmpty()
              ? Subjects.DEFAULT_IMAGE
              : job.environment().getImage();
      image = job.images.get(name);
      if (image == null) {
        throw new IllegalArgumentException("this runner does not offer image '" + name + "'");
      }
      agent = job.llm() ? jobAgent(image) : null;
    } catch (IllegalArgumentException e) {
      finished(ExitReason.RUNNER_ERROR, e.getMessage());
      return null;
    } catch (AgentUnavailable e) {
      job.events.runnerLineStoredAt(
          "job "
              + job.jobId()
              + " refused by runner "
              + job.config.runnerId()
              + ": "
              + e.getMessage());
      finished(ExitReason.AGENT_UNAVAILABLE, e.getMessage());
      return null;
    }
    // Stored by the same server that stamped the request: the wait in the queue is measured on one
    // clock.
    Instant takenAt =
        job.events.runnerLineStoredAt(
            "job " + job.jobId() + " taken by runner " + job.config.runnerId());
    JobDeadline deadline =
        new JobDeadline(
            request.getDeadlineEpochMs(), request.getCreatedEpochMs(), job.queuedAt, takenAt);
    Duration wall = wallLimit(deadline);
    if (wall.isNegative() || wall.isZero()) {
      finished(ExitReason.TIMEOUT, "deadline passed before start");
      return null;
    }
    return new Admission(model, task, image, wall, job.clock.instant().plus(wall), agent);
  }

  private void finished(String reason, String detail) {
    job.events.status(JobStatus.FINISHED, reason, job.config.runnerId(), "", detail);
  }

  /**
   * The job's model; refuses the job when this runner has no provider or does not offer the model.
   */
  private String jobModel() {
    if (job.provider == null) {
      throw new IllegalArgumentException("this runner has no model provider configured");
    }
    return job.provider.config().jobModel(job.request.getModel());
  }

  /**
   * The job's coding agent, checked against the image's {@value InstalledAgents#LABEL} label and
   * the runner's provider before anything runs.
   */
  private Admission.Agent jobAgent(ImageCatalogue.Offered image) throws AgentUnavailable {
    String asked = job.request.getAgent();
    CodingAgent agent =
        CodingAgent.of(asked)
            .orElseThrow(
                () ->
                    new AgentUnavailable(
                        "no agent named '"
                            + asked
                            + "' (agents: "
                            + String.join(", ", CodingAgent.ids())
                            + ")"));
    InstalledAgents installed =
        agent == CodingAgent.BUILTIN
            ? InstalledAgents.fromLabel(null)
            : InstalledAgents.fromLabel(
                job.docker.imageLabels(image.image()).get(InstalledAgents.LABEL));
    String refusal = installed.refusal(agent, image.image(), job.provider.config().provider().id());
    if (refusal != null) {
      throw new AgentUnavailable(refusal);
    }
    return new Admission.Agent(agent, installed.version(agent));
  }

  private Duration wallLimit(JobDeadline deadline) {
    JobRequest request = job.request;
    Duration max = job.config.wallLimit();
    Duration limit =
        request.getLimits().getWallSeconds() > 0
            ? Duration.ofSeconds(Math.min(request.getLimits().getWallSeconds(), max.toSeconds()))
            : max;
    if (request.getDeadlineEpochMs() > 0) {
      Duration untilDeadline = deadline.remaining(job.clock);
      return untilDeadline.compareTo(limit) < 0 ? untilDeadline : limit;
    }
    return limit;
  }

  /** The job's agent cannot run here ({@link ExitReason#AGENT_UNAVAILABLE}). */
  private static final class AgentUnavailable extends Exception {

    private static final long serialVersionUID = 1L;

    AgentUnavailable(String message) {
      super(message);
    }
  }
}
