package ai.spboucher.spbgit.gateway;

import ai.spboucher.spbgit.gateway.auth.RunnerKeys;
import ai.spboucher.spbgit.gateway.git.GitLimits;
import ai.spboucher.spbgit.gateway.git.SmartHttpRoutes;
import ai.spboucher.spbgit.gateway.http.ApiContract;
import ai.spboucher.spbgit.gateway.http.ApiRoutes;
import ai.spboucher.spbgit.gateway.http.ConnectionGuard;
import ai.spboucher.spbgit.gateway.http.HealthRoutes;
import ai.spboucher.spbgit.gateway.http.HttpErrors;
import ai.spboucher.spbgit.gateway.http.JobRoutes;
import ai.spboucher.spbgit.gateway.http.WebRoutes;
import ai.spboucher.spbgit.gateway.nats.JobBus;
import ai.spboucher.spbgit.gateway.nats.JobBusSigner;
import ai.spboucher.spbgit.gateway.nats.JobLogs;
import ai.spboucher.spbgit.gateway.repos.RepoName;
import ai.spboucher.spbgit.gateway.ws.LogSocketRoutes;
import com.sun.management.UnixOperatingSystemMXBean;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.WorkerExecutor;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.ext.web.Router;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.time.Clock;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * The gateway's HTTP server: the REST API and git smart HTTP on one port. Opens the data directory
 * on a worker thread and loads the API's OpenAPI document, then listens; logs {@code listening on
 * <url>} with the real port once ready.
 */
public final class GatewayVerticle extends VerticleBase {

  private static final System.Logger LOG = System.getLogger(GatewayVerticle.class.getName());
  private static final long USAGE_FLUSH_MS = 30_000;
  private static final long REAP_MS = 5_000;

  /**
   * Replays of stored job events at once; each holds a thread while NATS and the viewer are slow.
   */
  private static final int REPLAY_THREADS = 8;

  private final GatewayConfig config;
  private final Clock clock;
  private final PrometheusMeterRegistry registry;
  private WorkerExecutor gitPool;
  private WorkerExecutor replayPool;
  private HttpServer server;
  private ConnectionGuard guard;
  private DataDir data;
  private String publicUrl;
  private GatewayServices services;
  private Router routes;
  private ApiContract contract;
  private volatile JobBus bus;
  private RunnerKeys runnerKeys;

  public GatewayVerticle(GatewayConfig config, Clock clock) {
    this(config, clock, new PrometheusMeterRegistry(PrometheusConfig.DEFAULT));
  }

  /**
   * @param registry where the gateway's own metrics go; Vert.x's metrics too when it was built with
   *     it
   */
  public GatewayVerticle(GatewayConfig config, Clock clock, PrometheusMeterRegistry registry) {
    this.config = config;
    this.clock = clock;
    this.registry = registry;
  }

  @Override
  public Future<?> start() {
    // JGit can hold a thread for a whole clone: give it its own pool so API file I/O never queues
    // behind it.
    gitPool = vertx.createSharedWorkerExecutor("spb-git", config.gitWorkers());
    // A replay waits on NATS and on its viewer for as long as the log takes to send: not on the
    // shared workers.
    replayPool =
        vertx.createSharedWorkerExecutor("spb-replay", REPLAY_THREADS, 10, TimeUnit.MINUTES);
    return vertx
        .executeBlocking(
            () -> {
              DataDir dir = DataDir.open(config.dataDir(), clock);
              // Jobs no longer verify their fresh tokens one by one: a signing key that does not
              // verify fails here.
              dir.jobTokens(clock).checkSigningKey();
              runnerKeys = new RunnerKeys(config.runnerKeys());
              warnIfNoRunnerKey();
              return dir;
            })
        .compose(
            dir -> {
              data = dir;
              return ApiContract.load(vertx);
            })
        .compose(
            contract -> {
              services =
                  GatewayServices.build(vertx, data, config, clock, registry, this::cloneUrl);
              endInterruptedCreations();
              guard = connectionGuard();
              return vertx
                  .createHttpServer(
                      guard.configure(new HttpServerOptions().setDecompressionSupported(false)))
                  .connectionHandler(guard::opened)
                  .requestHandler(guard.admitting(router(data, services, contract)))
                  .listen(config.httpPort(), config.httpHost());
            })
        .onSuccess(this::serving);
  }

  /** Once listening: periodic work, the log line tests wait for, and the connection to NATS. */
  private void serving(HttpServer s) {
    server = s;
    guard.start();
    publicUrl = config.publicUrl(s.actualPort());
    vertx.setPeriodic(USAGE_FLUSH_MS, id -> flushTokenUsage());
    vertx.setPeriodic(
        REAP_MS,
        id -> {
          services
              .jobs()
              .runnerEvents()
              .reapOverdueJobs()
              .onFailure(
                  e ->
                      LOG.log(
                          System.Logger.Level.WARNING,
                          "cannot end the overdue jobs yet (tried again shortly)",
                          e));
          refreshQueueDepth();
        });
    LOG.log(
        System.Logger.Level.INFO,
        "listening on http://" + config.httpHost() + ":" + s.actualPort());
    connectJobQueue();
  }

  /** Blocking: lists the runner keys' directory. */
  private void warnIfNoRunnerKey() throws IOException {
    if (runnerKeys.current().isEmpty()) {
      LOG.log(
          System.Logger.Level.WARNING,
          "no runner key is registered in "
              + runnerKeys.dir()
              + " (SPB_RUNNER_KEYS): job tokens are sealed to no runner and no runner will run a"
              + " job; copy each runner's runner-key.pub.pem there (docs/operations.md)");
    }
  }

  /** The routes, for the test that keeps the OpenAPI document in step with them. */
  Router routes() {
    return routes;
  }

  /** The OpenAPI document the routes are validated against, for the same test. */
  ApiContract contract() {
    return contract;
  }

  /**
   * Sized to the process's descriptor limit, read now: a cap that does not fit it fails the start.
   */
  private ConnectionGuard connectionGuard() {
    long descriptors =
        ((UnixOperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
            .getMaxFileDescriptorCount();
    int cap = config.connections().capFor(descriptors);
    LOG.log(
        System.Logger.Level.INFO,
        "at most "
            + cap
            + " connections ("
            + config.connections().maxConnectionsPerAddress()
            + " per client address; file-descriptor limit "
            + descriptors
            + ")");
    return new ConnectionGuard(vertx, config.connections(), cap);
  }

  /**
   * Ends the jobs a previous run left queued, before status events are consumed: see {@link
   * ai.spboucher.spbgit.gateway.jobs.RunnerEvents#endInterruptedCreations}.
   */
  private void endInterruptedCreations() {
    services
        .jobs()
        .runnerEvents()
        .endInterruptedCreations()
        .onFailure(
            e ->
                LOG.log(
                    System.Logger.Level.ERROR,
                    "cannot end the jobs a previous run left queued (the deadline check ends them later)",
                    e));
  }

  private Router router(DataDir dir, GatewayServices services, ApiContract contract) {
    this.contract = contract;
    Supplier<JobLogs> logs = () -> bus == null ? null : bus.logs(replayPool);
    Router router = Router.router(vertx);
    new HealthRoutes(() -> bus != null && bus.isConnected(), registry).mount(router);
    new ApiRoutes(
            vertx,
            contract,
            services.authenticator(),
            dir.repos(),
            dir.pats(),
            services.jobTokens(),
            services.sessions(),
            this::cloneUrl,
            clock)
        .mount(router);
    new JobRoutes(
            vertx,
            contract,
            services.jobs(),
            services.views(),
            services.diffs(),
            services.comments(),
            dir.repos(),
            logs)
        .mount(router);
    new LogSocketRoutes(
            vertx, contract, services.jobs().ledger(), logs, () -> publicUrl, guard::toWebSocket)
        .mount(router);
    ApiRoutes.mountFallback(router);
    new WebRoutes(
            services.authenticator(), services.sessions(), config.publicUrl(0).startsWith("https:"))
        .mount(router);
    GitLimits gitLimits =
        new GitLimits(
            config.maxPushBytes(),
            config.maxObjectBytes(),
            config.maxPushInflatedBytes(),
            config.maxDeltaDepth(),
            config.pushTimeLimit());
    new SmartHttpRoutes(
            vertx,
            gitPool,
            services.authenticator(),
            dir.repos(),
            gitLimits,
            services.jobs().runnerEvents()::recordRefsWritten)
        .mount(router);
    router.route().last().handler(ctx -> ctx.fail(404));
    router.route().failureHandler(HttpErrors::handle);
    routes = router;
    return router;
  }

  /**
   * Connecting waits for NATS as long as it is down: on a worker pool of its own, so neither the
   * event loop nor the shared workers wait with it, and the gateway serves git meanwhile.
   */
  private void connectJobQueue() {
    // One thread that may wait for hours: the blocked-thread checker is told not to count it.
    WorkerExecutor connector =
        vertx.createSharedWorkerExecutor("spb-nats-connect", 1, 365, TimeUnit.DAYS);
    connector
        .executeBlocking(
            () ->
                JobBus.connect(
                    config.nats(),
                    config.logRetention(),
                    config.natsReplicas(),
                    new JobBusSigner(data.jobBusKey(), runnerKeys)),
            false)
        .onComplete(ar -> connector.close())
        .onSuccess(
            connected -> {
              bus = connected;
              connected.observe(services.metrics()::count);
              services.jobs().attach(connected);
              LOG.log(System.Logger.Level.INFO, "connected to NATS at " + config.nats().url());
            })
        .onFailure(
            e ->
                LOG.log(System.Logger.Level.ERROR, "cannot use NATS at " + config.nats().url(), e));
  }

  private void refreshQueueDepth() {
    JobBus queue = bus;
    if (queue != null && queue.isConnected()) {
      vertx
          .executeBlocking(queue::queueDepth, false)
          .onSuccess(depth -> services.metrics().queueDepth(depth));
    }
  }

  private String cloneUrl(RepoName name) {
    return publicUrl + "/" + name.value() + ".git";
  }

  /** The port actually bound; useful when configured with port 0. */
  public int actualPort() {
    return server.actualPort();
  }

  private void flushTokenUsage() {
    if (data.pats().hasUnsavedUsage()) {
      vertx
          .executeBlocking(
              () -> {
                data.pats().save();
                return null;
              })
          .onFailure(e -> LOG.log(System.Logger.Level.WARNING, "cannot save token usage", e));
    }
  }

  @Override
  public Future<?> stop() {
    Future<Void> closed = server == null ? Future.succeededFuture() : server.close();
    return closed
        .compose(
            v ->
                data == null
                    ? Future.succeededFuture()
                    : vertx.executeBlocking(
                        () -> {
                          if (bus != null) {
                            bus.close();
                          }
                          try {
                            data.pats().save();
                          } finally {
                            // Even when the token usage cannot be saved (a full disk), release the
                            // audit log's lock.
                            data.audit().close();
                          }
                          return null;
                        }))
        .onComplete(
            ar -> {
              if (gitPool != null) {
                gitPool.close();
              }
              if (replayPool != null) {
                replayPool.close();
              }
            });
  }
}
