package ai.spboucher.spbgit.gateway.http;

import ai.spboucher.spbgit.gateway.errors.RequestException;
import ai.spboucher.spbgit.gateway.jobs.Job;
import ai.spboucher.spbgit.gateway.jobs.WorkRef;
import ai.spboucher.spbgit.gateway.nats.JobLogs;
import ai.spboucher.spbgit.gateway.review.DiffScope;
import ai.spboucher.spbgit.gateway.review.ProposalDiffs;
import ai.spboucher.spbgit.proto.JobEvent;
import ai.spboucher.spbgit.proto.Subjects;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.RoutingContext;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * What a job produced, for the owner's review: its diff, its log, its network attempts and its
 * model calls. Mounted by {@link JobRoutes}.
 */
record JobOutputRoutes(
    Vertx vertx, ProposalDiffs diffs, Supplier<JobLogs> logs, Function<RoutingContext, Job> jobOf) {

  /**
   * The proposal's diff, or with {@code ?ref=partial} the diff of the partial work a stopped job
   * left. A client that goes away stops the computation (unless another client waits for the same
   * diff). The document admits only the names of {@link WorkRef} and {@link DiffScope}.
   */
  void diff(RoutingContext ctx) {
    WorkRef which = WorkRef.named(ctx.request().getParam("ref")).orElseThrow();
    DiffScope scope = DiffScope.named(ctx.request().getParam("scope")).orElseThrow();
    Job job = jobOf.apply(ctx);
    Responses.answerWhileConnected(ctx, clientGone -> diffs.diff(job, which, scope, clientGone));
  }

  void log(RoutingContext ctx) {
    Job job = jobOf.apply(ctx);
    JobLogs jobLogs = requireLogs("log");
    ctx.response()
        .setChunked(true)
        .putHeader("Content-Type", "text/plain; charset=utf-8")
        .putHeader("X-Content-Type-Options", "nosniff")
        .putHeader("Cache-Control", "no-store");
    // A retried publish that landed outside the stream's duplicate window is stored twice: show it
    // once.
    long[] lastSequence = {0};
    jobLogs
        .replay(
            job.id(),
            vertx.getOrCreateContext(),
            chunk -> {
              if (chunk.getSequence() > lastSequence[0]) {
                lastSequence[0] = chunk.getSequence();
                ctx.response().write(chunk.getLog().getData().toStringUtf8());
              }
            })
        .onSuccess(v -> ctx.response().end())
        .onFailure(ctx::fail);
  }

  /** Every attempt the job made to reach something outside its sandbox, allowed or refused. */
  void egress(RoutingContext ctx) {
    answerEvents(
        ctx,
        Subjects::egressEvents,
        event -> {
          var e = event.getEgress();
          return new JsonObject()
              .put("seq", event.getSequence())
              .put("method", e.getMethod())
              .put("host", e.getHost())
              .put("port", e.getPort())
              .put("allowed", e.getAllowed())
              .put("bytes_up", e.getBytesUp())
              .put("bytes_down", e.getBytesDown())
              .put("duration_ms", e.getDurationMs())
              .put("failure", e.getFailure())
              .put("started_epoch_ms", e.getStartedEpochMs())
              .put("via", e.getVia())
              .put("phase", e.getPhase().isEmpty() ? null : e.getPhase());
        });
  }

  /**
   * The exact requests the job's agent sent to the model, with status and token usage, as the
   * runner saw them.
   */
  void modelCalls(RoutingContext ctx) {
    answerEvents(
        ctx,
        Subjects::modelEvents,
        event -> {
          var c = event.getModelCall();
          return new JsonObject()
              .put("seq", event.getSequence())
              .put("ts", event.getTimestampEpochMs())
              .put("provider", c.getProvider())
              .put("model", c.getModel())
              .put("status", c.getStatus())
              .put("input_tokens", c.getInputTokens())
              .put("output_tokens", c.getOutputTokens())
              .put("duration_ms", c.getDurationMs())
              .put("error", c.getError())
              .put("request", c.getRequest().toStringUtf8())
              .put("truncated", c.getTruncated());
        });
  }

  /** Answers the events of the job's subject, each as {@code toJson} shows it, oldest first. */
  private void answerEvents(
      RoutingContext ctx,
      Function<String, String> subjectOf,
      Function<JobEvent, JsonObject> toJson) {
    Job job = jobOf.apply(ctx);
    JsonArray events = new JsonArray();
    Responses.answer(
        ctx,
        200,
        requireLogs("event")
            .replaySubject(
                subjectOf.apply(job.id()),
                vertx.getOrCreateContext(),
                event -> events.add(toJson.apply(event)))
            .map(v -> events));
  }

  private JobLogs requireLogs(String store) {
    JobLogs jobLogs = logs.get();
    if (jobLogs == null) {
      throw new RequestException.Unavailable("the job " + store + " store (NATS) is not reachable");
    }
    return jobLogs;
  }
}
