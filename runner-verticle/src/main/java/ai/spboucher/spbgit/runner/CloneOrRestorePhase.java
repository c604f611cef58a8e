package ai.spboucher.spbgit.runner;

import ai.spboucher.spbgit.proto.CacheOutcome;
import ai.spboucher.spbgit.proto.JobRequest;
import ai.spboucher.spbgit.runner.nats.EventMessages;
import java.io.IOException;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutorService;

/**
 * Clone or restore, for an environment with a setup script: restores the repository's cache at once
 * when the gateway's key files digest hits (the agent container then clones); otherwise clones the
 * base ref in a container of its own, then restores the cache when its key hits. Runs on the job's
 * thread; an early restore extracts on the run's restorer while the agent container is created.
 */
final class CloneOrRestorePhase {

  private final JobContext job;
  private final ExecutorService restorer;

  /**
   * @param restorer the run's own executor for an early restore, shut down when the run ends
   */
  CloneOrRestorePhase(JobContext job, ExecutorService restorer) {
    this.job = job;
    this.restorer = restorer;
  }

  /**
   * How the job ended (the clone failed, the wall clock ran out, a cancel), or null when it goes
   * on: to the setup phase unless the cache hit ({@link JobContext#cacheOutcome}).
   */
  JobEnding run() throws Exception {
    if (!job.mounted) {
      throw new IllegalStateException(
          "a setup phase needs the runner's own work volume, shared by the job's "
              + "containers: run the runner as root (docs/sandbox.md)");
    }
    if (restoreBeforeClone()) {
      return null;
    }
    job.phase = EventMessages.PHASE_CLONE;
    PhaseContainer.Exit clone =
        new PhaseContainer(job, "clone")
            .run(JobContainers.spec(job, job.egressDir, JobContainers.cloneEnvironment(job), null));
    if (clone.ending() != null) {
      return clone.ending();
    }
    if (clone.exitCode() != 0) {
      return new JobEnding(
          ExitReason.decide(
              new ExitReason.Observation(false, false, false, job.work.isFull(), clone.exitCode())),
          "the clone phase exited " + clone.exitCode());
    }
    restoreAfterClone();
    return null;
  }

  /** Restores the cache keyed on the cloned key files, or notes the miss the setup phase fills. */
  private void restoreAfterClone() throws IOException {
    JobRequest request = job.request;
    List<String> cachePaths = job.environment().getCacheList();
    String key =
        cachePaths.isEmpty() || !job.cache.enabled()
            ? null
            : JobCache.key(
                request.getRepo(),
                job.admission.image().digest(),
                job.environment().getSetup(),
                cachePaths,
                JobCache.readKeyFiles(
                    job.work.dir().resolve("repo"), job.environment().getCacheKeyFilesList()));
    Optional<CacheProducer> restored =
        key == null
            ? Optional.empty()
            : job.cache.restore(
                request.getRepo(), key, cachePaths, job.work.dir(), job.config.sandboxUid());
    if (restored.isPresent()) {
      job.cacheOutcome = CacheOutcome.CACHE_HIT;
      job.setupFacts.hit(key, restored.get().jobId(), restored.get().commit());
      job.pump.runnerLine(
          "cache hit " + key + ": restored " + cachePaths + ", setup phase skipped");
      return;
    }
    if (key != null) {
      job.cacheOutcome = CacheOutcome.CACHE_MISS;
      job.missedKey = key;
      job.pump.runnerLine("cache miss " + key + ": running the setup phase");
    }
  }

  /**
   * A hit without a clone container: when the gateway sent the digest of the cache key files at the
   * job's base commit, the key is known before any container runs, and on a hit the cache is
   * restored into the empty work volume; the agent container then clones that commit into it
   * ({@code SPB_CLONE=1}). False, with nothing written, when the request lacks the digest or base
   * commit (an older gateway) or the cache misses: the clone container runs as before.
   */
  private boolean restoreBeforeClone() throws IOException {
    JobRequest request = job.request;
    List<String> cachePaths = job.environment().getCacheList();
    String digest = job.environment().getCacheKeyFilesDigest();
    if (digest.isEmpty()
        || request.getBaseSha().isEmpty()
        || cachePaths.isEmpty()
        || !job.cache.enabled()) {
      return false;
    }
    String key =
        JobCache.key(
            request.getRepo(),
            job.admission.image().digest(),
            job.environment().getSetup(),
            cachePaths,
            digest);
    CacheEntry entry = job.cache.open(request.getRepo(), key);
    if (entry == null) {
      return false;
    }
    // Extracted while the agent container is created (AgentPhase waits for both before it starts
    // it): the create takes about as long as a small cache's restore.
    job.restoring =
        restorer.submit(
            () -> {
              CacheRestore.extract(
                  entry.tar(), cachePaths, job.work.dir(), job.config.sandboxUid());
              return null;
            });
    job.cacheOutcome = CacheOutcome.CACHE_HIT;
    job.setupFacts.hit(key, entry.producer().jobId(), entry.producer().commit());
    job.clonesInAgent = true;
    job.pump.runnerLine(
        "cache hit "
            + key
            + " (key files at "
            + request.getBaseSha()
            + " as the gateway read them): restoring "
            + cachePaths
            + " while the agent container is created, clone and setup phases skipped: the agent"
            + " container clones");
    return true;
  }
}
