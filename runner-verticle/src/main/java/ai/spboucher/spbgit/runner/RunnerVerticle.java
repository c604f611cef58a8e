package ai.spboucher.spbgit.runner;

import ai.spboucher.spbgit.runner.docker.DockerSandbox;
import ai.spboucher.spbgit.runner.nats.NatsLink;
import ai.spboucher.spbgit.runner.trust.GatewayKeys;
import ai.spboucher.spbgit.runner.trust.JobRequestCheck;
import ai.spboucher.spbgit.runner.trust.RunnerKey;
import io.nats.client.Connection;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.json.JsonObject;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.Map;

/**
 * The runner node: checks that its sandbox uid is no login account of this host, reads the
 * gateway's job-bus keys and its own runner key (creating it on first start), checks the Docker
 * engine, resolves its image catalogue ({@code SPB_IMAGES}) to the images present (built for that
 * uid) and their ids, connects to NATS, reclaims what a previous run left behind, then starts
 * taking jobs. All of that blocks, so it runs in {@code executeBlocking}; jobs themselves run on
 * the dispatcher's own threads.
 */
public final class RunnerVerticle extends VerticleBase {

  private static final System.Logger LOG = System.getLogger(RunnerVerticle.class.getName());

  private final RunnerConfig config;
  private final Clock clock;
  private DockerSandbox docker;
  private NatsLink nats;
  private JobDispatcher dispatcher;

  /** The images this runner offers, by catalogue name; resolved once at start. */
  private Map<String, ImageCatalogue.Offered> offered;

  public RunnerVerticle(RunnerConfig config, Clock clock) {
    this.config = config;
    this.clock = clock;
  }

  @Override
  public Future<?> start() {
    return vertx
        .executeBlocking(
            () -> {
              int uid = config.sandboxUid();
              SandboxUidCheck.refusal(
                      uid, SandboxUidCheck.hostAccounts(uid, Path.of("/etc/passwd")))
                  .ifPresent(
                      why -> {
                        throw new IllegalStateException(why);
                      });
              Files.createDirectories(config.workRoot());
              // Before anything else that may take long: without them no request could run.
              GatewayKeys gatewayKeys = GatewayKeys.load(config.gatewayKeys(), clock);
              RunnerKey key = RunnerKey.loadOrCreate(config.runnerKey());
              logKeys(gatewayKeys, key);
              docker =
                  new DockerSandbox(
                      config.dockerHost(), config.slots(), config.dockerCallTimeout());
              if (!docker.answers()) {
                throw new IllegalStateException(
                    "the Docker engine at " + config.dockerHost() + " does not answer");
              }
              offered = config.images().offer(image -> docker.imageId(image, uid));
              if (offered.isEmpty()) {
                throw new IllegalStateException(
                    "none of the catalogue's images exists on this engine: " + config.images());
              }
              nats = NatsLink.connect(config.nats(), "spb-runner-" + config.runnerId());
              nats.ensureStreams();
              dispatcher =
                  new JobDispatcher(
                      vertx,
                      config,
                      docker,
                      nats,
                      clock,
                      offered,
                      new JobRequestCheck(gatewayKeys, key, clock));
              dispatcher.reclaimLeftovers();
              dispatcher.start();
              return null;
            })
        .compose(v -> startHealthEndpoint())
        // Only now is everything up: "ready" is what operators and tests wait for.
        .onSuccess(v -> logReady());
  }

  private void logKeys(GatewayKeys gatewayKeys, RunnerKey key) {
    LOG.log(
        System.Logger.Level.INFO,
        "runner key "
            + key.keyId()
            + " in "
            + key.privateFile()
            + "; the gateway seals job tokens to it once its public half "
            + key.publicFile()
            + " is in the gateway's SPB_RUNNER_KEYS");
    LOG.log(
        System.Logger.Level.INFO,
        "running only requests signed by the gateway's job-bus keys "
            + String.join(", ", gatewayKeys.keyIds())
            + " (SPB_GATEWAY_KEYS "
            + gatewayKeys.location()
            + ")");
  }

  private void logReady() {
    LOG.log(
        System.Logger.Level.INFO,
        "runner "
            + config.runnerId()
            + " ready with "
            + config.slots()
            + " slot(s), offering images "
            + offered.values().stream()
                .map(o -> o.name() + "=" + o.image() + " (" + o.digest() + ")")
                .toList()
            + (config.model() == null
                ? ", no model provider (llm jobs " + "are refused)"
                : ", model provider "
                    + config.model().provider().id()
                    + " at "
                    + config.model().baseUrl()
                    + " (models "
                    + config.model().allowedModels()
                    + ", "
                    + config.model().tokenBudget()
                    + " tokens per job)"));
    if (config.natsOnThisMachine()) {
      LOG.log(
          System.Logger.Level.WARNING,
          "this runner reaches NATS at "
              + config.natsUrl()
              + ", on this machine: "
              + "it shares the gateway's node, which is for trying the product out only; production runners belong "
              + "on another node (docs/operations.md)");
    }
  }

  /**
   * {@code GET /healthz} on {@code SPB_RUNNER_HEALTH} (off when unset): 200 while the runner can
   * take jobs (NATS connected and the Docker engine answering), 503 otherwise, with its id, slots
   * and running jobs. It reveals nothing about the jobs.
   */
  private Future<?> startHealthEndpoint() {
    if (config.health() == null) {
      return Future.succeededFuture();
    }
    return vertx
        .createHttpServer()
        .requestHandler(
            request -> {
              if (!"/healthz".equals(request.path())) {
                request.response().setStatusCode(404).end();
                return;
              }
              boolean connected = nats.connection().getStatus() == Connection.Status.CONNECTED;
              boolean engine = dispatcher.engineAnswers();
              String status =
                  !connected ? "nats disconnected" : !engine ? "docker engine not answering" : "ok";
              request
                  .response()
                  .setStatusCode(connected && engine ? 200 : 503)
                  .putHeader("Content-Type", "application/json")
                  .end(
                      new JsonObject()
                          .put("status", status)
                          .put("runner_id", config.runnerId())
                          .put("slots", config.slots())
                          .put("running_jobs", dispatcher.runningJobs())
                          .encode());
            })
        .listen(config.health().port(), config.health().host())
        .onSuccess(
            server ->
                LOG.log(
                    System.Logger.Level.INFO,
                    "runner health on http://"
                        + config.health().host()
                        + ":"
                        + server.actualPort()
                        + "/healthz"));
  }

  @Override
  public Future<?> stop() {
    return vertx.executeBlocking(
        () -> {
          if (dispatcher != null) {
            dispatcher.stop();
          }
          if (nats != null) {
            nats.close();
          }
          if (docker != null) {
            docker.close();
          }
          return null;
        });
  }
}
