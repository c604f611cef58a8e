package ai.spboucher.spbgit.gateway.jobs;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

/**
 * The job ended: reported by its runner, or decided by the gateway (cancelled before a runner took
 * it, runner_lost, runner_error).
 *
 * @param cacheNote whether setup's cache was kept, or null (not written then)
 * @param setupChanges what setup changed in the checkout, or null (not written then)
 * @param spend the model spend the runner metered, or null (not written then)
 */
record JobFinished(
    String job,
    String exitReason,
    String runner,
    String container,
    String detail,
    String cacheNote,
    JsonArray setupChanges,
    Spend spend)
    implements AuditEvent {

  @Override
  public JsonObject toJson() {
    JsonObject json =
        EventFields.head(this)
            .put("exit_reason", exitReason)
            .put("runner", runner)
            .put("container", container)
            .put("detail", detail);
    if (cacheNote != null) {
      json.put("cache_note", cacheNote);
    }
    if (setupChanges != null) {
      json.put("setup_changes", setupChanges);
    }
    if (spend != null) {
      json.put("provider", spend.provider())
          .put("model", spend.model())
          .put("input_tokens", spend.inputTokens())
          .put("output_tokens", spend.outputTokens());
    }
    return json;
  }

  static JobFinished from(JsonObject e) {
    Spend spend = null;
    if (e.getString("provider") != null || e.getValue("input_tokens") != null) {
      spend =
          new Spend(
              e.getString("provider"),
              e.getString("model"),
              e.getLong("input_tokens", 0L),
              e.getLong("output_tokens", 0L));
    }
    return new JobFinished(
        e.getString("job"),
        e.getString("exit_reason"),
        e.getString("runner"),
        e.getString("container"),
        e.getString("detail"),
        e.getString("cache_note"),
        e.getJsonArray("setup_changes"),
        spend);
  }

  @Override
  public Job applyTo(Job job, String at) {
    if (job.isFinished()) {
      return job;
    }
    return job.with(
        b -> {
          b.state = JobState.FINISHED;
          b.exitReason = exitReason;
          b.runnerId = EventFields.nonEmpty(runner, job.runnerId());
          b.containerId = EventFields.nonEmpty(container, job.containerId());
          b.finishedAt = at;
          b.detail = detail;
          if (spend != null) {
            b.spend = spend;
          }
          b.setup = Job.withSetupFacts(b.setup, "cache_note", cacheNote);
          b.setup = Job.withSetupFacts(b.setup, "setup_changes", setupChanges);
        });
  }
}
