package ai.spboucher.spbgit.runner;

import ai.spboucher.spbgit.runner.egress.EgressPolicy;
import ai.spboucher.spbgit.runner.egress.EgressProxy;
import ai.spboucher.spbgit.runner.egress.EgressRecorder;
import ai.spboucher.spbgit.runner.nats.EventMessages;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;

/**
 * Setup: runs the environment's setup script in a fresh container on the cloned work volume, with
 * the setup proxy's socket only (no git relay, no model endpoint), notes what it changed in the
 * checkout and keeps the cache paths if it succeeds. Runs on the job's thread.
 */
final class SetupPhase {

  private final JobContext job;

  SetupPhase(JobContext job) {
    this.job = job;
  }

  /** How the job ended (setup failed, the wall clock ran out, a cancel); null when it goes on. */
  JobEnding run() throws Exception {
    Path setupDir = Files.createDirectories(job.jobDir.resolve("setup"));
    Files.setPosixFilePermissions(setupDir, PosixFilePermissions.fromString("rwxr-xr-x"));
    job.setupProxy =
        EgressProxy.start(
            job.vertx,
            setupDir.resolve("egress.sock"),
            EgressPolicy.of(job.environment().getSetupEgressList()),
            new EgressRecorder(
                job.published(EventMessages.VIA_PROXY, () -> EventMessages.PHASE_SETUP)));
    PhaseContainer.Exit setup =
        new PhaseContainer(job, "setup")
            .run(JobContainers.spec(job, setupDir, JobContainers.setupEnvironment(job), null));
    JobContext.closeQuietly(job.setupProxy);
    job.setupProxy = null;
    Files.deleteIfExists(setupDir.resolve("egress.sock"));
    Files.deleteIfExists(setupDir);
    if (setup.ending() != null) {
      return setup.ending();
    }
    if (setup.exitCode() != 0) {
      String reason =
          ExitReason.decide(
              new ExitReason.Observation(
                  false, false, setup.oomKilled(), job.work.isFull(), setup.exitCode()));
      String detail = "the setup script exited " + setup.exitCode();
      return new JobEnding(
          reason.startsWith("exit_code:") ? ExitReason.SETUP_FAILED : reason, detail);
    }
    job.setupFacts.readChanges(job.work.dir());
    if (!job.setupFacts.setupChanges().isEmpty()) {
      job.pump.runnerLine(
          "setup changed in the checkout (kept out of the proposal): "
              + String.join(", ", job.setupFacts.setupChanges()));
    }
    if (job.missedKey != null) {
      CacheKept kept =
          job.cache.keep(
              job.request.getRepo(),
              job.missedKey,
              job.environment().getCacheList(),
              job.work.dir(),
              // The owner-trusted commit the clone phase checked out and setup ran on.
              new CacheProducer(job.jobId(), job.request.getSetupSha()));
      job.setupFacts.cacheNote(kept.describe());
      job.pump.runnerLine("cache " + job.missedKey + " " + kept.describe());
    }
    return null;
  }
}
