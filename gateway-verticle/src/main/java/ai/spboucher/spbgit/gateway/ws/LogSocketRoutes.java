package ai.spboucher.spbgit.gateway.ws;

import ai.spboucher.spbgit.gateway.errors.RequestException;
import ai.spboucher.spbgit.gateway.http.ApiContract;
import ai.spboucher.spbgit.gateway.http.ApiRoutes;
import ai.spboucher.spbgit.gateway.jobs.Job;
import ai.spboucher.spbgit.gateway.jobs.JobLedger;
import ai.spboucher.spbgit.gateway.nats.JobLogs;
import ai.spboucher.spbgit.gateway.repos.RepoName;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.ServerWebSocket;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import java.util.HashMap;
import java.util.Map;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * {@code GET /api/v1/repos/:name/agent-jobs/:id/logs?after=<seq>} upgraded to a websocket. Owner
 * only; when the browser sends an {@code Origin}, it must be the gateway's own, so another site
 * cannot ride the owner's session cookie. A request that is not a websocket handshake gets a JSON
 * 400 (426 for another protocol version), like any other bad API request.
 */
public final class LogSocketRoutes {

  private final Vertx vertx;
  private final ApiContract contract;
  private final JobLedger jobs;
  private final Supplier<JobLogs> logs;
  private final Supplier<String> publicUrl;
  private final Function<HttpServerRequest, Future<ServerWebSocket>> accept;

  /**
   * Each job's shared feed while it has viewers; on the gateway's context only, where every socket
   * lives.
   */
  private final Map<String, JobFeed> feeds = new HashMap<>();

  /**
   * @param accept accepts a handshake: the connection guard's, which pings the socket and counts it
   *     until it closes
   */
  public LogSocketRoutes(
      Vertx vertx,
      ApiContract contract,
      JobLedger jobs,
      Supplier<JobLogs> logs,
      Supplier<String> publicUrl,
      Function<HttpServerRequest, Future<ServerWebSocket>> accept) {
    this.vertx = vertx;
    this.contract = contract;
    this.jobs = jobs;
    this.logs = logs;
    this.publicUrl = publicUrl;
    this.accept = accept;
  }

  /** Mount after the API authentication handler. */
  public void mount(Router router) {
    contract
        .validated(router.get("/api/v1/repos/:name/agent-jobs/:id/logs"), "followJobLog")
        .handler(this::upgrade);
  }

  private void upgrade(RoutingContext ctx) {
    ApiRoutes.requireOwner(ctx);
    requireOwnOrigin(ctx);
    Job job = jobs.get(RepoName.of(ctx.pathParam("name")).value(), ctx.pathParam("id"));
    long after = parseAfter(ctx.request().getParam("after"));
    if (refusedAsNoHandshake(ctx)) {
      return;
    }
    JobLogs jobLogs = logs.get();
    if (jobLogs == null) {
      throw new RequestException.Unavailable("the job log store (NATS) is not reachable");
    }
    var context = vertx.getOrCreateContext();
    accept
        .apply(ctx.request())
        .onSuccess(socket -> watch(new LogSocket(socket, after), job.id(), after, context, jobLogs))
        .onFailure(ctx::fail);
  }

  /**
   * Joins the job's shared feed (starting one if the job has none), or, when the viewer is further
   * behind than the shared feed reaches back, a feed of its own that reads the job's events from
   * the start.
   */
  private void watch(LogSocket viewer, String jobId, long after, Context context, JobLogs jobLogs) {
    JobFeed shared = feeds.get(jobId);
    if (shared == null) {
      shared =
          new JobFeed(
              jobId, context, () -> jobs.get(jobId), feed -> feeds.remove(feed.jobId(), feed));
      feeds.put(jobId, shared);
      shared.start(jobLogs);
    }
    if (!shared.attach(viewer, after)) {
      JobFeed own = new JobFeed(jobId, context, () -> jobs.get(jobId), feed -> {});
      own.start(jobLogs);
      own.attach(viewer, after);
    }
  }

  /** Answers a request that is not a websocket handshake the server accepts; true if it did. */
  private static boolean refusedAsNoHandshake(RoutingContext ctx) {
    var refusal = WebSocketHandshake.refusalOf(ctx.request().headers()::getAll);
    refusal.ifPresent(
        r -> {
          // The contract check left an upgrade request paused for toWebSocket(), which is not
          // coming.
          ctx.request().resume();
          if (r.status() == 426) {
            ctx.response().putHeader("Sec-WebSocket-Version", WebSocketHandshake.VERSION);
          }
          ctx.fail(r.status(), new RequestException.Invalid(r.message()));
        });
    return refusal.isPresent();
  }

  private void requireOwnOrigin(RoutingContext ctx) {
    String origin = ctx.request().getHeader("Origin");
    if (origin == null) {
      if (ApiRoutes.viaSession(ctx)) {
        throw new RequestException.Forbidden("a browser session needs an Origin header");
      }
      return;
    }
    String host = ctx.request().getHeader("Host");
    String scheme = publicUrl.get().startsWith("https:") ? "https://" : "http://";
    if (!origin.equals(publicUrl.get()) && !(host != null && origin.equals(scheme + host))) {
      throw new RequestException.Forbidden("websocket origin " + origin + " is not this gateway");
    }
  }

  private static long parseAfter(String value) {
    if (value == null || value.isEmpty()) {
      return 0;
    }
    try {
      long after = Long.parseLong(value);
      if (after < 0) {
        throw new NumberFormatException();
      }
      return after;
    } catch (NumberFormatException e) {
      throw new RequestException.Invalid("'after' must be a non-negative number");
    }
  }
}
