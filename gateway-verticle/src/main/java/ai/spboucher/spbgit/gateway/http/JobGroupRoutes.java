package ai.spboucher.spbgit.gateway.http;

import ai.spboucher.spbgit.gateway.errors.RequestException;
import ai.spboucher.spbgit.gateway.jobs.Job;
import ai.spboucher.spbgit.gateway.jobs.JobLedger;
import ai.spboucher.spbgit.gateway.jobs.JobViews;
import ai.spboucher.spbgit.gateway.jobs.WorkRef;
import ai.spboucher.spbgit.gateway.repos.RepoName;
import ai.spboucher.spbgit.gateway.review.DiffStat;
import ai.spboucher.spbgit.gateway.review.ProposalDiffs;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.RoutingContext;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * A best-of-N group's attempts side by side ({@code getJobGroup}); mounted by {@link JobRoutes}.
 */
record JobGroupRoutes(Vertx vertx, JobLedger ledger, JobViews views, ProposalDiffs diffs) {

  private static final System.Logger LOG = System.getLogger(JobGroupRoutes.class.getName());

  /**
   * The attempts of a best-of-N group side by side: how each ended, its tests, the size of its
   * change, spend and duration, and where to review its proposal. A client that goes away stops the
   * diffs behind the sizes, as it does the diff view's.
   */
  void group(RoutingContext ctx) {
    RepoName repo = RepoName.of(ctx.pathParam("name"));
    String group = ctx.pathParam("gid");
    List<Job> attempts =
        ledger.group(group).stream().filter(j -> j.repo().equals(repo.value())).toList();
    if (attempts.isEmpty()) {
      throw new RequestException.NotFound("no group " + group + " in " + repo);
    }
    Responses.answerWhileConnected(
        ctx,
        clientGone ->
            views
                .of(repo, attempts)
                .compose(
                    list ->
                        diffStatsOf(attempts, list, clientGone)
                            .map(
                                stats ->
                                    new JsonObject()
                                        .put("group", group)
                                        .put("repo", repo.value())
                                        .put("task", attempts.get(0).task())
                                        .put("jobs", attemptsOf(repo, list, stats)))));
  }

  /**
   * Each attempt's {@link DiffStat} as JSON, in the order of {@code attempts}: of its proposal, or
   * failing that of its partial work; null for one that pushed neither or whose diff failed.
   */
  private Future<List<JsonObject>> diffStatsOf(
      List<Job> attempts, List<JsonObject> views, Future<Void> clientGone) {
    List<Future<JsonObject>> stats = new ArrayList<>();
    for (int i = 0; i < attempts.size(); i++) {
      JsonObject view = views.get(i);
      WorkRef work =
          view.getString("proposal_sha") != null
              ? WorkRef.PROPOSAL
              : view.getString("partial_sha") != null ? WorkRef.PARTIAL : null;
      stats.add(
          work == null ? Future.succeededFuture() : diffStatOf(attempts.get(i), work, clientGone));
    }
    return Future.all(stats).map(all -> all.<JsonObject>list());
  }

  /**
   * One attempt's diff stat; null when its diff fails (too large, refs deleted meanwhile): one
   * attempt's diff must not cost the owner the comparison of the others.
   */
  private Future<JsonObject> diffStatOf(Job attempt, WorkRef work, Future<Void> clientGone) {
    return diffs
        .diff(attempt, work, clientGone)
        // A diff's JSON can run to megabytes: parse it on a worker, as it was computed.
        .compose(
            diff ->
                vertx.executeBlocking(
                    () -> DiffStat.of(new JsonObject(diff)).map(DiffStat::toJson).orElse(null),
                    false))
        .recover(
            e -> {
              LOG.log(
                  System.Logger.Level.INFO,
                  "no diff stat for job " + attempt.id() + "'s " + work.noun() + ": " + e);
              return Future.succeededFuture();
            });
  }

  private static JsonArray attemptsOf(
      RepoName repo, List<JsonObject> views, List<JsonObject> diffStats) {
    JsonArray attempts = new JsonArray();
    for (int i = 0; i < views.size(); i++) {
      attempts.add(attemptOf(repo, views.get(i)).put("diff_stat", diffStats.get(i)));
    }
    return attempts;
  }

  private static JsonObject attemptOf(RepoName repo, JsonObject job) {
    JsonObject spend = job.getJsonObject("spend");
    return new JsonObject()
        .put("id", job.getString("id"))
        .put("status", job.getString("status"))
        .put("exit_reason", job.getString("exit_reason"))
        .put("test_result", job.getString("test_result"))
        .put("input_tokens", spend == null ? null : spend.getLong("input_tokens"))
        .put("output_tokens", spend == null ? null : spend.getLong("output_tokens"))
        .put(
            "duration_seconds",
            secondsBetween(job.getString("started_at"), job.getString("finished_at")))
        .put("proposal_sha", job.getString("proposal_sha"))
        .put("decision", job.getJsonObject("decision"))
        .put("proposal_page", "/repos/" + repo.value() + "/agent-jobs/" + job.getString("id"));
  }

  /** Whole seconds from start to end, or null until both are known. */
  private static Long secondsBetween(String start, String end) {
    return start == null || end == null
        ? null
        : Duration.between(Instant.parse(start), Instant.parse(end)).toSeconds();
  }
}
