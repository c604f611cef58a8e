package ai.spboucher.spbgit.gateway.http;

import ai.spboucher.spbgit.gateway.errors.RequestException;
import ai.spboucher.spbgit.gateway.jobs.Job;
import ai.spboucher.spbgit.gateway.jobs.WorkRef;
import ai.spboucher.spbgit.gateway.nats.JobLogs;
import ai.spboucher.spbgit.gateway.review.DiffScope;
import ai.spboucher.spbgit.gateway.review.ProposalDiffs;
import ai.spboucher.spbgit.proto.Subjects;
import io.vertx.core.Promise;
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
final class JobOutputRoutes {

  private final Vertx vertx;
  private final ProposalDiffs diffs;
  private final Supplier<JobLogs> logs;
  private final Function<RoutingContext, Job> jobOf;

  JobOutputRoutes(
      Vertx vertx,
      ProposalDiffs diffs,
      Supplier<JobLogs> logs,
      Function<RoutingContext, Job> jobOf) {
    this.vertx = vertx;
    this.diffs = diffs;
    this.logs = logs;
    this.jobOf = jobOf;
  }

  /**
   * The proposal's diff, or with {@code ?ref=partial} the diff of the partial work a stopped job
   * left. A client that goes away stops the computation (unless another client waits for the same
   * diff).
   */
  void diff(RoutingContext ctx) {
    ApiRoutes.requireOwner(ctx);
    WorkRef which =
        WorkRef.named(ctx.request().getParam("ref"))
            .orElseThrow(
                () -> new RequestException.Invalid("'ref' must be 'proposal' or 'partial'"));
    DiffScope scope =
        DiffScope.named(ctx.request().getParam("scope"))
            .orElseThrow(
                () -> new RequestException.Invalid("'scope' must be 'cumulative' or 'revision'"));
    Promise<Void> clientGone = Promise.promise();
    ctx.response().closeHandler(closed -> clientGone.tryComplete());
    diffs
        .diff(jobOf.apply(ctx), which, scope, clientGone.future())
        .onSuccess(diff -> Responses.json(ctx, 200, diff))
        .onFailure(
            e -> {
              if (!ctx.response().closed()) {
                ctx.fail(e);
              }
            });
  }

  void log(RoutingContext ctx) {
    ApiRoutes.requireOwner(ctx);
    Job job = jobOf.apply(ctx);
    JobLogs jobLogs = logs.get();
    if (jobLogs == null) {
      throw new RequestException.Unavailable("the job log store (NATS) is not reachable");
    }
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
    ApiRoutes.requireOwner(ctx);
    Job job = jobOf.apply(ctx);
    JsonArray attempts = new JsonArray();
    requireLogs()
        .replaySubject(
            Subjects.egressEvents(job.id()),
            vertx.getOrCreateContext(),
            event -> {
              var e = event.getEgress();
              attempts.add(
                  new JsonObject()
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
                      .put("phase", e.getPhase().isEmpty() ? null : e.getPhase()));
            })
        .onSuccess(v -> Responses.json(ctx, 200, attempts))
        .onFailure(ctx::fail);
  }

  /**
   * The exact requests the job's agent sent to the model, with status and token usage, as the
   * runner saw them.
   */
  void modelCalls(RoutingContext ctx) {
    ApiRoutes.requireOwner(ctx);
    Job job = jobOf.apply(ctx);
    JsonArray calls = new JsonArray();
    requireLogs()
        .replaySubject(
            Subjects.modelEvents(job.id()),
            vertx.getOrCreateContext(),
            event -> {
              var c = event.getModelCall();
              calls.add(
                  new JsonObject()
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
                      .put("truncated", c.getTruncated()));
            })
        .onSuccess(v -> Responses.json(ctx, 200, calls))
        .onFailure(ctx::fail);
  }

  private JobLogs requireLogs() {
    JobLogs jobLogs = logs.get();
    if (jobLogs == null) {
      throw new RequestException.Unavailable("the job event store (NATS) is not reachable");
    }
    return jobLogs;
  }
}
