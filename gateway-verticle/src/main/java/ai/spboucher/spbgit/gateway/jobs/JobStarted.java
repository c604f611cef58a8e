package ai.spboucher.spbgit.gateway.jobs;

import io.vertx.core.json.JsonObject;

/**
 * A runner started the job.
 *
 * @param cache {@code hit}, {@code miss} or {@code none}; null from a runner older than them
 * @param cacheKey the key of the cache entry a hit restored, with who kept it ({@code
 *     cacheProducer}: {@code {job, commit}}); null without a hit
 */
record JobStarted(
    String job,
    String runner,
    String container,
    String imageDigest,
    String cache,
    String agent,
    String agentVersion,
    String cacheKey,
    JsonObject cacheProducer)
    implements AuditEvent {

  @Override
  public Job applyTo(Job job, String at) {
    if (job.isFinished() || job.state() == JobState.STARTED) {
      return job;
    }
    return job.with(
        b -> {
          b.state = JobState.STARTED;
          b.runnerId = runner;
          b.containerId = container;
          b.startedAt = at;
          b.imageDigest = imageDigest;
          b.cache = cache;
          b.agent = EventFields.nonEmpty(agent, job.agent());
          b.agentVersion = EventFields.nonEmpty(agentVersion, job.agentVersion());
          b.setup = Job.withSetupFacts(b.setup, "cache_key", cacheKey);
          b.setup = Job.withSetupFacts(b.setup, "cache_producer", cacheProducer);
        });
  }
}
