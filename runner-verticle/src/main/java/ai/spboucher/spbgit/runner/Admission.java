package ai.spboucher.spbgit.runner;

import ai.spboucher.spbgit.common.TaskSanitizer;
import ai.spboucher.spbgit.proto.CodingAgent;
import java.time.Duration;
import java.time.Instant;

/**
 * What {@link AdmitPhase} established: the job may run, with this model (null without the model
 * endpoint), task text, image, wall clock and end, and coding agent (null for an exec job).
 */
record Admission(
    String model,
    TaskSanitizer.Sanitized task,
    ImageCatalogue.Offered image,
    Duration wall,
    Instant end,
    Agent agent) {

  /** An llm job's coding agent and the version its image carries. */
  record Agent(CodingAgent agent, String version) {}
}
