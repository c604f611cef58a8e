package ai.spboucher.spbgit.runner;

import ai.spboucher.spbgit.common.TaskSanitizer;
import ai.spboucher.spbgit.proto.CacheOutcome;
import ai.spboucher.spbgit.proto.CodingAgent;
import ai.spboucher.spbgit.proto.Environment;
import ai.spboucher.spbgit.proto.JobRequest;
import ai.spboucher.spbgit.proto.JobStatus;
import ai.spboucher.spbgit.proto.Mode;
import ai.spboucher.spbgit.proto.Subjects;
import ai.spboucher.spbgit.runner.docker.ContainerWatch;
import ai.spboucher.spbgit.runner.docker.DockerSandbox;
import ai.spboucher.spbgit.runner.docker.SandboxSpec;
import ai.spboucher.spbgit.runner.docker.WorkVolume;
import ai.spboucher.spbgit.runner.egress.EgressPolicy;
import ai.spboucher.spbgit.runner.egress.EgressProxy;
import ai.spboucher.spbgit.runner.egress.EgressRecord;
import ai.spboucher.spbgit.runner.egress.EgressRecorder;
import ai.spboucher.spbgit.runner.git.GitRelay;
import ai.spboucher.spbgit.runner.model.ProviderClient;
import ai.spboucher.spbgit.runner.nats.BackgroundEvents;
import ai.spboucher.spbgit.runner.nats.EventMessages;
import ai.spboucher.spbgit.runner.nats.EventPublisher;
import com.github.dockerjava.api.command.InspectContainerResponse;
import io.vertx.core.Vertx;
import io.vertx.core.net.TrustOptions;
import java.io.Closeable;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * One job on this runner, from taking it to removing its containers, in named phases: {@link
 * #admit}, {@link #prepare} (a size-capped work volume, an egress proxy admitting only the job's
 * allow-list, the git relay, for llm jobs an {@link LlmSession}: model endpoint, token meter,
 * breach notice), {@link #setup} (for an environment with a setup script: a clone container, then
 * the repository's cache or a setup container with its own egress proxy; only the cache when the
 * gateway's key files digest hits), {@link #runAgent} (one fresh hardened container for the agent
 * or exec command and the tests) and {@link #report}. Output, egress attempts and model calls are
 * streamed as events, and the exit reason is decided from what the runner observed. {@link #run}
 * blocks for the job's whole life on one worker thread; {@link #cancel} may be called from any
 * thread.
 */
final class JobExecution {

  private static final System.Logger LOG = System.getLogger(JobExecution.class.getName());
  private static final Duration STOP_GRACE = Duration.ofSeconds(30);

  /** Serves the job's sockets. */
  private final Vertx vertx;

  private final RunnerConfig config;
  private final DockerSandbox docker;

  /** The runner's model provider; null when it has none. */
  private final ProviderClient provider;

  /** The CAs of an https gateway; null for the JDK's default trust store. */
  private final TrustOptions gatewayTrust;

  private final JobRequest request;

  /** The job token, opened from the request's copy sealed to this runner; never logged. */
  private final String jobToken;

  private final EventPublisher events;
  private final Clock clock;

  /** When JetStream stored the request, by the NATS server's clock; null when unknown. */
  private final Instant queuedAt;

  /** The images this runner offers, by catalogue name. */
  private final Map<String, ImageCatalogue.Offered> images;

  private final JobCache cache;
  private volatile String containerId;
  private volatile String cancelReason;

  /**
   * Set before the runner itself kills the container (its wall clock ran out, or a grace period
   * ended).
   */
  private volatile boolean killedByRunner;

  /** The job's container when removing it failed (the engine was away): the dispatcher retries. */
  private volatile String unremovedContainer;

  /**
   * A job whose time in the queue is unknown: its deadline is judged by this runner's clock alone.
   * It has no job token: it cannot push.
   */
  JobExecution(
      Vertx vertx,
      RunnerConfig config,
      DockerSandbox docker,
      ProviderClient provider,
      TrustOptions gatewayTrust,
      JobRequest request,
      EventPublisher events,
      Clock clock) {
    this(
        vertx,
        config,
        docker,
        provider,
        gatewayTrust,
        request,
        "",
        events,
        clock,
        null,
        Map.of(
            Subjects.DEFAULT_IMAGE,
            new ImageCatalogue.Offered(Subjects.DEFAULT_IMAGE, config.agentImage(), "")),
        new JobCache(config.workRoot().resolve("cache"), 0));
  }

  /**
   * @param jobToken the job token, opened from the request's sealed copy
   * @param queuedAt when JetStream stored the request (its metadata timestamp), for {@link
   *     JobDeadline}
   */
  JobExecution(
      Vertx vertx,
      RunnerConfig config,
      DockerSandbox docker,
      ProviderClient provider,
      TrustOptions gatewayTrust,
      JobRequest request,
      String jobToken,
      EventPublisher events,
      Clock clock,
      Instant queuedAt,
      Map<String, ImageCatalogue.Offered> images,
      JobCache cache) {
    this.vertx = vertx;
    this.images = images;
    this.cache = cache;
    this.queuedAt = queuedAt;
    this.config = config;
    this.docker = docker;
    this.provider = provider;
    this.gatewayTrust = gatewayTrust;
    this.request = request;
    this.jobToken = jobToken;
    this.events = events;
    this.clock = clock;
  }

  private boolean llm() {
    return request.getMode() == Mode.MODE_LLM;
  }

  /** An llm job, or an exec job that asked for the model endpoint ({@code exec_model}). */
  private boolean usesModel() {
    return llm() || request.getExecModel();
  }

  String jobId() {
    return request.getJobId();
  }

  /**
   * Stops the job: its container is killed and it ends with {@code reason} (cancelled or
   * runner_lost).
   */
  void cancel(String reason) {
    cancelReason = reason;
    String id = containerId;
    if (id != null) {
      try {
        docker.kill(id);
      } catch (RuntimeException e) {
        // The job's own thread meets the same engine when it ends the job: its end says what
        // happened.
        LOG.log(
            System.Logger.Level.WARNING,
            "job " + jobId() + ": cannot kill its container: " + e.getMessage());
      }
    }
  }

  /**
   * Runs the job through its phases: {@link #admit}, {@link #prepare}, {@link #setup} (for an
   * environment with a setup script: the clone, then the cache or the setup container), {@link
   * #runAgent} and {@link #report}.
   */
  void run() {
    Admission admission = admit();
    if (admission == null) {
      return;
    }
    Workspace ws = new Workspace(admission, config.workRoot().resolve(jobId()));
    String reason = ExitReason.RUNNER_ERROR;
    String detail = "";
    try {
      prepare(ws);
      Ending setupEnding = setup(ws);
      if (setupEnding != null) {
        reason = setupEnding.reason();
        detail = setupEnding.detail();
      } else {
        reason = runAgent(ws);
      }
      ws.pump.runnerLine("job ended: " + reason);
    } catch (StoppedFromOutside e) {
      LOG.log(System.Logger.Level.WARNING, "job " + jobId() + ": " + e.getMessage());
      reason = ExitReason.RUNNER_ERROR;
      detail = e.getMessage();
      ws.pump.runnerLine("runner error: " + detail);
    } catch (Exception e) {
      LOG.log(System.Logger.Level.ERROR, "job " + jobId() + " failed in the runner", e);
      reason = ExitReason.RUNNER_ERROR;
      detail =
          containerId != null && lostTheEngine(e)
              ? "lost the Docker engine while the job was running (it stopped or restarted): "
                  + e.getMessage()
              : String.valueOf(e.getMessage());
      ws.pump.runnerLine("runner error: " + detail);
    } finally {
      report(ws, reason, detail);
    }
  }

  /**
   * What {@link #admit} established: the job may run, with this model, task text, image and time.
   */
  private record Admission(
      String model,
      TaskSanitizer.Sanitized task,
      ImageCatalogue.Offered image,
      Duration wall,
      Instant end,
      JobAgent agent) {}

  /** An llm job's coding agent and the version its image carries; null for an exec job. */
  private record JobAgent(CodingAgent agent, String version) {}

  /** The job's agent cannot run here ({@link ExitReason#AGENT_UNAVAILABLE}). */
  private static final class AgentUnavailable extends Exception {

    private static final long serialVersionUID = 1L;

    AgentUnavailable(String message) {
      super(message);
    }
  }

  /** How a phase before the agent's ended the job. */
  private record Ending(String reason, String detail) {}

  /**
   * The job's resources on this runner, made by {@link #prepare} and released by {@link #report}.
   */
  private final class Workspace {
    final Admission admission;
    final Path jobDir;
    final WorkVolume work;
    final LogPump pump = new LogPump(events::log, jobId(), config.logCapBytes());
    final BackgroundEvents background = new BackgroundEvents(events, jobId());
    Path egressDir;
    boolean mounted;
    EgressProxy proxy;

    /**
     * The setup phase's own proxy, admitting only {@code setup_egress}; null without a setup phase.
     */
    EgressProxy setupProxy;

    GitRelay git;
    LlmSession session;
    RefusalNotes refusals;

    /** The phase the agent-side proxy and git relay serve now: clone, then agent. */
    volatile String phase = EventMessages.PHASE_AGENT;

    CacheOutcome cache = CacheOutcome.CACHE_NONE;

    /** The hit's key and producer, whether the cache was kept, what setup changed. */
    final SetupFacts setupFacts = new SetupFacts();

    /**
     * The cache was restored before any clone ({@link #restoreBeforeClone}): the agent container
     * clones the base commit into the restored {@code /work/repo} itself.
     */
    boolean clonesInAgent;

    /** The restore of a {@link #clonesInAgent} hit, extracting; null otherwise. */
    CompletableFuture<Void> restoring;

    boolean started;

    Workspace(Admission admission, Path jobDir) {
      this.admission = admission;
      this.jobDir = jobDir;
      this.work = new WorkVolume(jobDir.resolve("work"), diskLimit(), config.sandboxUid());
    }

    Duration remaining() {
      return Duration.between(clock.instant(), admission.end());
    }
  }

  /**
   * Admit: refuses a job this runner cannot run (no such model, an invisible task, an image it does
   * not offer, a coding agent the image lacks or the provider does not speak) or that is past its
   * deadline, publishing FINISHED; null then.
   */
  private Admission admit() {
    String model;
    TaskSanitizer.Sanitized task = TaskSanitizer.visible(request.getTask());
    ImageCatalogue.Offered image;
    JobAgent agent;
    try {
      model = usesModel() ? jobModel() : null;
      if (llm() && task.text().isEmpty()) {
        throw new IllegalArgumentException(
            "the task has no visible text once its hidden characters and HTML "
                + "comments are removed");
      }
      String name =
          environment().getImage().isEmpty() ? Subjects.DEFAULT_IMAGE : environment().getImage();
      image = images.get(name);
      if (image == null) {
        throw new IllegalArgumentException("this runner does not offer image '" + name + "'");
      }
      agent = llm() ? jobAgent(image) : null;
    } catch (IllegalArgumentException e) {
      events.status(
          JobStatus.FINISHED, ExitReason.RUNNER_ERROR, config.runnerId(), "", e.getMessage());
      return null;
    } catch (AgentUnavailable e) {
      events.runnerLineStoredAt(
          "job " + jobId() + " refused by runner " + config.runnerId() + ": " + e.getMessage());
      events.status(
          JobStatus.FINISHED, ExitReason.AGENT_UNAVAILABLE, config.runnerId(), "", e.getMessage());
      return null;
    }
    // Stored by the same server that stamped the request: the wait in the queue is measured on one
    // clock.
    Instant takenAt =
        events.runnerLineStoredAt("job " + jobId() + " taken by runner " + config.runnerId());
    JobDeadline deadline =
        new JobDeadline(
            request.getDeadlineEpochMs(), request.getCreatedEpochMs(), queuedAt, takenAt);
    Duration wall = wallLimit(deadline);
    if (wall.isNegative() || wall.isZero()) {
      events.status(
          JobStatus.FINISHED,
          ExitReason.TIMEOUT,
          config.runnerId(),
          "",
          "deadline passed before start");
      return null;
    }
    return new Admission(model, task, image, wall, clock.instant().plus(wall), agent);
  }

  /**
   * The job's coding agent, checked against the image's {@value InstalledAgents#LABEL} label and
   * the runner's provider before anything runs. Reads the label from the engine (blocking, on the
   * job's thread).
   */
  private JobAgent jobAgent(ImageCatalogue.Offered image) throws AgentUnavailable {
    CodingAgent agent =
        CodingAgent.of(request.getAgent())
            .orElseThrow(
                () ->
                    new AgentUnavailable(
                        "no agent named '"
                            + request.getAgent()
                            + "' (agents: "
                            + String.join(", ", CodingAgent.ids())
                            + ")"));
    InstalledAgents installed =
        agent == CodingAgent.BUILTIN
            ? InstalledAgents.fromLabel(null)
            : InstalledAgents.fromLabel(
                docker.imageLabels(image.image()).get(InstalledAgents.LABEL));
    String refusal = installed.refusal(agent, image.image(), provider.config().provider().id());
    if (refusal != null) {
      throw new AgentUnavailable(refusal);
    }
    return new JobAgent(agent, installed.version(agent));
  }

  /**
   * Prepare: the work volume, the egress proxies, the git relay and, for llm jobs, the model
   * session.
   */
  private void prepare(Workspace ws) throws IOException {
    ws.egressDir = Files.createDirectories(ws.jobDir.resolve("egress"));
    Files.setPosixFilePermissions(ws.egressDir, PosixFilePermissions.fromString("rwxr-xr-x"));
    ws.mounted = ws.work.mount();
    ws.refusals = new RefusalNotes(ws.pump);
    ws.proxy =
        EgressProxy.start(
            vertx,
            ws.egressDir.resolve("egress.sock"),
            EgressPolicy.of(allowList()),
            new EgressRecorder(
                published(ws.background, ws.refusals, EventMessages.VIA_PROXY, () -> ws.phase)));
    ws.git =
        GitRelay.start(
            vertx,
            ws.egressDir.resolve(GitRelay.SOCKET_NAME),
            URI.create(request.getCloneUrl()),
            jobToken,
            gatewayTrust,
            published(ws.background, ws.refusals, EventMessages.VIA_GIT_RELAY, () -> ws.phase));
    if (ws.admission.model() != null) {
      ws.session =
          LlmSession.open(
              vertx,
              provider,
              ws.admission.model(),
              ws.jobDir,
              ws.egressDir,
              config.sandboxUid(),
              ws.background);
    }
    TaskSanitizer.Sanitized task = ws.admission.task();
    if (task.hiddenCharacters() + task.htmlComments() > 0) {
      ws.pump.runnerLine(
          "task: removed "
              + task.hiddenCharacters()
              + " hidden characters and "
              + task.htmlComments()
              + " HTML comments before the job saw it");
    }
  }

  private Environment environment() {
    return request.getEnvironment();
  }

  /**
   * Setup: for an environment with a setup script, restores the cache at once when the gateway's
   * key files digest hits ({@link #restoreBeforeClone}); otherwise clones the base ref in a
   * container of its own, then restores the repository's cache when its key hits, or else runs the
   * script in a fresh container on the same volume (the setup proxy's socket only: no git relay, no
   * model endpoint) and keeps the cache paths if it succeeds. Returns how the job ended when it did
   * (the clone or setup failed, the wall clock ran out, a cancel), null when the agent phase is to
   * run. A job without a setup script clones in its agent container, as before.
   */
  private Ending setup(Workspace ws) throws Exception {
    if (environment().getSetup().isEmpty()) {
      return null;
    }
    if (!ws.mounted) {
      throw new IllegalStateException(
          "a setup phase needs the runner's own work volume, shared by the job's "
              + "containers: run the runner as root (docs/sandbox.md)");
    }
    if (restoreBeforeClone(ws)) {
      return null;
    }
    ws.phase = EventMessages.PHASE_CLONE;
    PhaseExit clone =
        runPhase(ws, "clone", "-clone", phaseSpec(ws, ws.egressDir, cloneEnvironment(ws), null));
    if (clone.ending() != null) {
      return clone.ending();
    }
    if (clone.exitCode() != 0) {
      return new Ending(
          ExitReason.decide(
              new ExitReason.Observation(false, false, false, ws.work.isFull(), clone.exitCode())),
          "the clone phase exited " + clone.exitCode());
    }
    List<String> cachePaths = environment().getCacheList();
    String key =
        cachePaths.isEmpty() || !cache.enabled()
            ? null
            : JobCache.key(
                request.getRepo(),
                ws.admission.image().digest(),
                environment().getSetup(),
                cachePaths,
                JobCache.readKeyFiles(
                    ws.work.dir().resolve("repo"), environment().getCacheKeyFilesList()));
    Optional<CacheProducer> restored =
        key == null
            ? Optional.empty()
            : cache.restore(request.getRepo(), key, cachePaths, ws.work.dir(), config.sandboxUid());
    if (restored.isPresent()) {
      ws.cache = CacheOutcome.CACHE_HIT;
      ws.setupFacts.hit(key, restored.get().jobId(), restored.get().commit());
      ws.pump.runnerLine("cache hit " + key + ": restored " + cachePaths + ", setup phase skipped");
      return null;
    }
    if (key != null) {
      ws.cache = CacheOutcome.CACHE_MISS;
      ws.pump.runnerLine("cache miss " + key + ": running the setup phase");
    }
    Path setupDir = Files.createDirectories(ws.jobDir.resolve("setup"));
    Files.setPosixFilePermissions(setupDir, PosixFilePermissions.fromString("rwxr-xr-x"));
    ws.setupProxy =
        EgressProxy.start(
            vertx,
            setupDir.resolve("egress.sock"),
            EgressPolicy.of(environment().getSetupEgressList()),
            new EgressRecorder(
                published(
                    ws.background,
                    ws.refusals,
                    EventMessages.VIA_PROXY,
                    () -> EventMessages.PHASE_SETUP)));
    Map<String, String> env = new LinkedHashMap<>();
    env.put("SPB_JOB_ID", jobId());
    env.put("SPB_PHASE", "setup");
    env.put("SPB_SETUP", environment().getSetup());
    PhaseExit setup = runPhase(ws, "setup", "-setup", phaseSpec(ws, setupDir, env, null));
    closeQuietly(ws.setupProxy);
    ws.setupProxy = null;
    Files.deleteIfExists(setupDir.resolve("egress.sock"));
    Files.deleteIfExists(setupDir);
    if (setup.ending() != null) {
      return setup.ending();
    }
    if (setup.exitCode() == 0) {
      ws.setupFacts.readChanges(ws.work.dir());
      if (!ws.setupFacts.setupChanges().isEmpty()) {
        ws.pump.runnerLine(
            "setup changed in the checkout (kept out of the proposal): "
                + String.join(", ", ws.setupFacts.setupChanges()));
      }
    }
    if (setup.exitCode() != 0) {
      String reason =
          ExitReason.decide(
              new ExitReason.Observation(
                  false, false, setup.oomKilled(), ws.work.isFull(), setup.exitCode()));
      String detail = "the setup script exited " + setup.exitCode();
      return new Ending(reason.startsWith("exit_code:") ? ExitReason.SETUP_FAILED : reason, detail);
    }
    if (key != null) {
      CacheKept kept =
          cache.keep(
              request.getRepo(),
              key,
              cachePaths,
              ws.work.dir(),
              // The owner-trusted commit the clone phase checked out and setup ran on.
              new CacheProducer(jobId(), request.getSetupSha()));
      ws.setupFacts.cacheNote(kept.describe());
      ws.pump.runnerLine("cache " + key + " " + kept.describe());
    }
    return null;
  }

  /**
   * A hit without a clone container: when the gateway sent the digest of the cache key files at the
   * job's base commit, the key is known before any container runs, and on a hit the cache is
   * restored into the empty work volume; the agent container then clones that commit into it
   * ({@code SPB_CLONE=1}). False, with nothing written, when the request lacks the digest or base
   * commit (an older gateway) or the cache misses: the clone container runs as before.
   */
  private boolean restoreBeforeClone(Workspace ws) throws IOException {
    List<String> cachePaths = environment().getCacheList();
    String digest = environment().getCacheKeyFilesDigest();
    if (digest.isEmpty()
        || request.getBaseSha().isEmpty()
        || cachePaths.isEmpty()
        || !cache.enabled()) {
      return false;
    }
    String key =
        JobCache.key(
            request.getRepo(),
            ws.admission.image().digest(),
            environment().getSetup(),
            cachePaths,
            digest);
    CacheEntry entry = cache.open(request.getRepo(), key);
    if (entry == null) {
      return false;
    }
    // Extracted while the agent container is created (runAgent waits for both before it starts
    // it): the create takes about as long as a small cache's restore.
    ws.restoring = new CompletableFuture<>();
    Thread restore =
        new Thread(
            () -> {
              try {
                JobCache.extract(entry.tar(), cachePaths, ws.work.dir(), config.sandboxUid());
                ws.restoring.complete(null);
              } catch (IOException | RuntimeException e) {
                ws.restoring.completeExceptionally(e);
              }
            },
            "cache-restore-" + jobId());
    restore.setDaemon(true);
    restore.start();
    ws.cache = CacheOutcome.CACHE_HIT;
    ws.setupFacts.hit(key, entry.producer().jobId(), entry.producer().commit());
    ws.clonesInAgent = true;
    ws.pump.runnerLine(
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

  /** How a phase's container ended: its exit code, or how the runner ended the job meanwhile. */
  private record PhaseExit(long exitCode, boolean oomKilled, Ending ending) {}

  /**
   * A container of the job with the same hardening and limits whatever its phase: only its
   * environment, its socket directory (the setup phase's holds its own proxy only) and, for the
   * agent phase of an llm job, the breach notice differ.
   */
  private SandboxSpec phaseSpec(
      Workspace ws, Path socketDir, Map<String, String> env, Path noticeDir) {
    return SandboxSpec.builder()
        .image(ws.admission.image().image())
        .jobId(jobId())
        .runnerId(config.runnerId())
        .uid(config.sandboxUid())
        .env(env)
        .cpus(Math.min(limit(request.getLimits().getCpus(), config.cpus()), config.cpus()))
        .memoryBytes((long) limit(request.getLimits().getMemoryBytes(), config.memoryBytes()))
        .pidsLimit((long) limit(request.getLimits().getPids(), config.pidsLimit()))
        .workDir(ws.work.dir())
        .egressDir(socketDir)
        .workIsMounted(ws.mounted)
        .diskBytes(diskLimit())
        .noticeDir(noticeDir)
        .build();
  }

  /**
   * Runs one container of a phase before the agent's to its end within the job's remaining wall
   * clock, then kills and removes it, so nothing it started outlives it. Its output goes into the
   * job's log.
   */
  private PhaseExit runPhase(Workspace ws, String phase, String nameSuffix, SandboxSpec spec)
      throws Exception {
    String id = docker.create(spec, nameSuffix);
    containerId = id;
    CountDownLatch ended = new CountDownLatch(1);
    Closeable logs = null;
    try {
      if (cancelReason != null) {
        return new PhaseExit(-1, false, new Ending(cancelReason, ""));
      }
      Duration wall = ws.remaining();
      ws.pump.runnerLine(
          phase
              + " phase starting in container "
              + id.substring(0, 12)
              + " (image "
              + ws.admission.image().name()
              + ", "
              + Math.max(0, wall.toSeconds())
              + " s left, egress "
              + ("setup".equals(phase) ? ws.setupProxy.policy().entries() : "none")
              + ")");
      logs = docker.attach(id, ws.pump::offer, ended::countDown);
      docker.start(id);
      if ("setup".equals(phase)) {
        publishStarted(ws, id);
      }
      Long exit = wall.isNegative() ? null : docker.awaitExit(id, wall);
      if (exit == null) {
        String reason = cancelReason != null ? cancelReason : ExitReason.TIMEOUT;
        if (cancelReason == null) {
          ws.pump.runnerLine(
              "wall clock limit reached in the " + phase + " phase: stopping the container");
        }
        return new PhaseExit(
            -1,
            false,
            new Ending(
                reason,
                ExitReason.TIMEOUT.equals(reason)
                    ? "wall clock limit reached in the " + phase + " phase"
                    : ""));
      }
      InspectContainerResponse state = docker.inspect(id);
      ended.await(STOP_GRACE.toMillis(), TimeUnit.MILLISECONDS);
      ws.pump.runnerLine(phase + " phase ended with exit code " + exit);
      if (cancelReason != null) {
        return new PhaseExit(exit, false, new Ending(cancelReason, ""));
      }
      return new PhaseExit(exit, Boolean.TRUE.equals(state.getState().getOOMKilled()), null);
    } finally {
      killedByRunner = true;
      docker.kill(id);
      closeQuietly(logs);
      try {
        docker.remove(id);
        containerId = null;
      } catch (RuntimeException e) {
        unremovedContainer = id;
        throw e;
      } finally {
        killedByRunner = false;
      }
    }
  }

  private void publishStarted(Workspace ws, String id) {
    if (!ws.started) {
      ws.started = true;
      JobAgent agent = ws.admission.agent();
      events.started(
          config.runnerId(),
          id,
          ws.admission.image().digest(),
          ws.cache,
          agent == null ? "" : agent.agent().id(),
          agent == null ? "" : agent.version(),
          ws.setupFacts.started());
    }
  }

  /**
   * Run: the agent (or exec command) and the tests in a fresh container, with the job's allow-list,
   * the git relay and, for llm jobs, the model endpoint; on the clone and what setup left when
   * there was a setup phase.
   */
  private String runAgent(Workspace ws) throws Exception {
    ws.phase = EventMessages.PHASE_AGENT;
    boolean phased = !environment().getSetup().isEmpty();
    Map<String, String> env = agentEnvironment(ws, phased ? "agent" : null);
    if (ws.clonesInAgent) {
      // The container clones the commit the cache was keyed on; its git relay attempts are then
      // the agent phase's, as in a job without setup.
      env.put("SPB_CLONE", "1");
      env.put("SPB_BASE_SHA", request.getBaseSha());
    }
    SandboxSpec spec =
        phaseSpec(ws, ws.egressDir, env, ws.session == null ? null : ws.session.noticeDir());
    try {
      containerId = docker.create(spec);
    } finally {
      // The container may start only on the whole cache, and the volume may be cleaned up only
      // once nothing writes it.
      awaitRestore(ws);
    }
    if (cancelReason != null) {
      // Cancelled while the container was being prepared: it never starts.
      ws.pump.runnerLine("job ended before it started: " + cancelReason);
      return cancelReason;
    }
    // A job in one container has its whole wall clock from its start, as before phases; a phased
    // one what is left.
    Duration wall = phased ? ws.remaining() : ws.admission.wall();
    if (wall.isNegative() || wall.isZero()) {
      ws.pump.runnerLine("wall clock limit reached before the agent phase");
      return ExitReason.TIMEOUT;
    }
    Closeable logs = null;
    ContainerWatch watch = null;
    try {
      ws.pump.runnerLine(
          (phased ? "agent phase starting" : "job " + jobId() + " starting")
              + " in container "
              + containerId.substring(0, 12)
              + " on runner "
              + config.runnerId()
              + " (image "
              + ws.admission.image().name()
              + ", wall clock limit "
              + wall.toSeconds()
              + " s, egress "
              + ws.proxy.policy().entries()
              + (ws.session == null ? "" : ", " + ws.session.describe())
              + (ws.admission.agent() == null
                  ? ""
                  : ", agent "
                      + ws.admission.agent().agent().id()
                      + " "
                      + ws.admission.agent().version())
              + ")");
      logs = docker.attach(containerId, ws.pump::offer, ws.pump::dockerStreamEnded);
      watch = docker.watch(containerId);
      docker.start(containerId);
      publishStarted(ws, containerId);
      return awaitOutcome(wall, ws.work, ws.pump, ws.session, watch);
    } finally {
      ws.pump.awaitDockerStreamEnd(STOP_GRACE.toMillis());
      if (logs != null) {
        logs.close();
      }
      closeQuietly(watch);
    }
  }

  /** Waits for the restore of a hit keyed by the gateway, if one runs; rethrows its failure. */
  private static void awaitRestore(Workspace ws) throws IOException, InterruptedException {
    if (ws.restoring == null) {
      return;
    }
    try {
      ws.restoring.get();
    } catch (ExecutionException e) {
      if (e.getCause() instanceof IOException io) {
        throw io;
      }
      throw new IllegalStateException("cache restore failed", e.getCause());
    } finally {
      ws.restoring = null;
    }
  }

  /**
   * Report: closes the job's sockets, publishes what they recorded, then FINISHED, and cleans up.
   */
  private void report(Workspace ws, String reason, String detail) {
    // Closed before FINISHED, so every model call and egress attempt is metered and published by
    // then.
    closeQuietly(ws.session);
    closeQuietly(ws.git);
    closeQuietly(ws.proxy);
    closeQuietly(ws.setupProxy);
    if (ws.session != null && ExitReason.PROVIDER_ERROR.equals(reason)) {
      // Read once the session is closed: by then the call the agent gave up on is recorded.
      detail = ws.session.providerErrorDetail();
      ws.pump.runnerLine(detail);
    }
    flush(ws.background, ws.pump);
    if (ws.session != null) {
      ws.pump.runnerLine(ws.session.describeSpend());
    }
    closeQuietly(ws.pump);
    events.status(
        JobStatus.FINISHED,
        reason,
        config.runnerId(),
        containerId == null ? "" : containerId,
        detail,
        ws.session == null ? null : ws.session.spend(),
        ws.setupFacts.finished());
    cleanUp(ws.work, ws.jobDir, ws.session);
  }

  /**
   * Whether a failure came from the engine going away rather than from a request it refused: the
   * connection broke (an I/O failure under docker-java's exception), or the engine does not answer
   * any more.
   */
  private boolean lostTheEngine(Exception failure) {
    for (Throwable t = failure; t != null; t = t.getCause()) {
      if (t instanceof IOException || t instanceof DockerSandbox.EngineNotAnswering) {
        return true;
      }
    }
    return !docker.answers();
  }

  /**
   * The job's container if {@link #run} could not remove it; null once it is gone or was never
   * created.
   */
  String unremovedContainer() {
    return unremovedContainer;
  }

  /**
   * Publishes each attempt as an egress event of the phase at the time, and logs the refused ones.
   */
  private static Consumer<EgressRecord> published(
      BackgroundEvents background, RefusalNotes refusals, String via, Supplier<String> phase) {
    return record -> {
      background.egress(EventMessages.egress(record, via, phase.get()));
      refusals.note(record);
    };
  }

  /**
   * The job's model; refuses the job when this runner has no provider or does not offer the model.
   */
  private String jobModel() {
    if (provider == null) {
      throw new IllegalArgumentException("this runner has no model provider configured");
    }
    return provider.config().jobModel(request.getModel());
  }

  private String awaitOutcome(
      Duration wall, WorkVolume work, LogPump pump, LlmSession session, ContainerWatch watch)
      throws InterruptedException, ExecutionException, StoppedFromOutside {
    Long exit =
        session == null
            ? docker.awaitExit(containerId, wall)
            : session.awaitExit(docker, containerId, wall, config.breachGrace(), pump);
    String breach = session == null ? null : session.breach();
    // An llm job warned of its timeout ends timeout even when its agent stopped within the grace
    // period.
    boolean timedOut =
        ExitReason.TIMEOUT.equals(breach)
            || (exit == null && cancelReason == null && breach == null);
    if (exit == null) {
      if (timedOut) {
        pump.runnerLine(
            "wall clock limit of " + wall.toSeconds() + " s reached: stopping the container");
      } else if (cancelReason == null) {
        pump.runnerLine("grace period over: stopping the container");
      }
      killedByRunner = true;
      docker.kill(containerId);
      docker.awaitExit(containerId, STOP_GRACE);
    }
    if (cancelReason == null && !killedByRunner) {
      requireEndedFromWithin(watch);
    }
    InspectContainerResponse state = docker.inspect(containerId);
    Long exitCode = state.getState().getExitCodeLong();
    String cancelled = cancelReason;
    if (cancelled != null) {
      return cancelled;
    }
    return ExitReason.decide(
        new ExitReason.Observation(
            false,
            timedOut,
            session != null && session.budgetExceeded(),
            Boolean.TRUE.equals(state.getState().getOOMKilled()),
            work.isFull(),
            exitCode == null ? -1 : exitCode,
            llm()));
  }

  /**
   * Fails when the engine sent the container a signal that neither the runner nor a cancel asked
   * for: its exit code is then the engine's doing (a stopping or restarting engine sends SIGTERM),
   * not the job's.
   */
  private static void requireEndedFromWithin(ContainerWatch watch)
      throws InterruptedException, StoppedFromOutside {
    // Signals are reported before the death, so once the death is seen, so is every signal.
    watch.awaitDeath(Duration.ofSeconds(5));
    List<String> signals = watch.signals();
    if (!signals.isEmpty()) {
      throw new StoppedFromOutside(
          "the Docker engine stopped the container (signal "
              + String.join(", ", signals)
              + "), not the job or the runner: the engine was stopping or restarting, or someone stopped the container");
    }
  }

  /** The container was ended by the engine, not by the job's processes or the runner. */
  private static final class StoppedFromOutside extends Exception {

    private static final long serialVersionUID = 1L;

    StoppedFromOutside(String message) {
      super(message);
    }
  }

  /**
   * Publishes what the egress proxy and the model endpoint recorded; says so in the log if some was
   * lost.
   */
  private static void flush(BackgroundEvents background, LogPump pump) {
    try {
      if (!background.close(STOP_GRACE)) {
        pump.runnerLine(
            "egress and model events still unpublished after " + STOP_GRACE.toSeconds() + " s");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    if (background.dropped() > 0) {
      pump.runnerLine(
          background.dropped() + " egress or model events were dropped (too many at once)");
    }
  }

  /**
   * The container's environment: no secret at all. The repository is reached through the git relay,
   * which holds the job token; for llm jobs (and exec jobs with {@code exec_model}) the model
   * endpoint holds the provider's key. The task is its visible text only ({@link
   * TaskSanitizer#visible}): the entrypoint writes it into the commit message, where hidden
   * characters or an HTML comment would carry instructions no reviewer sees.
   */
  private Map<String, String> agentEnvironment(Workspace ws, String phase) {
    GitRelay git = ws.git;
    LlmSession session = ws.session;
    String visibleTask = ws.admission.task().text();
    Map<String, String> env = new LinkedHashMap<>();
    env.put("SPB_JOB_ID", jobId());
    if (phase != null) {
      env.put("SPB_PHASE", phase);
    }
    env.put("SPB_REPO", request.getRepo());
    env.put("SPB_CLONE_URL", SandboxSpec.GIT_URL + git.repoPath());
    env.put("SPB_BASE_REF", request.getBaseRef());
    if (!request.getBaseWorkRef().isEmpty()) {
      // A revision: it works on the revised job's work, which that ref held when it was created.
      env.put("SPB_BASE_WORK_REF", request.getBaseWorkRef());
      env.put("SPB_BASE_SHA", request.getBaseSha());
    }
    env.put("SPB_TASK", visibleTask);
    env.put("SPB_MODE", llm() ? "llm" : "exec");
    if (ws.admission.agent() != null) {
      env.put("SPB_AGENT", ws.admission.agent().agent().id());
      // The built-in agent takes the owner's AGENTS.md from here, never from the checkout the job
      // can edit; a CLI agent reads the checkout's file itself.
      if (ws.admission.agent().agent() == CodingAgent.BUILTIN
          && !request.getInstructions().isEmpty()) {
        env.put("SPB_INSTRUCTIONS", request.getInstructions());
      }
    }
    if (!llm() && session != null) {
      env.put("SPB_EXEC_MODEL", "1");
    }
    env.put("SPB_EXEC", request.getExecCommand());
    env.put("SPB_TEST_COMMAND", request.getTestCommand());
    if (session != null) {
      session.addEnvironment(env);
    }
    return env;
  }

  /**
   * The clone phase's environment: the base ref at the owner-trusted commit setup runs on ({@code
   * setup_sha}), never a revision's work, which only the agent phase puts on top: setup runs
   * third-party code with the setup egress, and what it leaves is cached for the default branch's
   * jobs.
   */
  private Map<String, String> cloneEnvironment(Workspace ws) {
    Map<String, String> env = agentEnvironment(ws, "clone");
    env.remove("SPB_BASE_WORK_REF");
    env.remove("SPB_BASE_SHA");
    if (!request.getSetupSha().isEmpty()) {
      env.put("SPB_SETUP_SHA", request.getSetupSha());
    }
    return env;
  }

  /**
   * The job's extra entries and the runner's own. The gateway is not on it: the job reaches its
   * repository through the git relay only.
   */
  private List<String> allowList() {
    List<String> entries = new ArrayList<>(request.getEgressAllowList());
    entries.addAll(environment().getEgressList());
    entries.addAll(config.egressAllow());
    return entries;
  }

  private Duration wallLimit(JobDeadline deadline) {
    Duration limit =
        request.getLimits().getWallSeconds() > 0
            ? Duration.ofSeconds(
                Math.min(request.getLimits().getWallSeconds(), config.wallLimit().toSeconds()))
            : config.wallLimit();
    if (request.getDeadlineEpochMs() > 0) {
      Duration untilDeadline = deadline.remaining(clock);
      return untilDeadline.compareTo(limit) < 0 ? untilDeadline : limit;
    }
    return limit;
  }

  private long diskLimit() {
    long asked = request.getLimits().getDiskBytes();
    return asked > 0 ? Math.min(asked, config.diskBytes()) : config.diskBytes();
  }

  private static double limit(double asked, double max) {
    return asked > 0 ? Math.min(asked, max) : max;
  }

  private void cleanUp(WorkVolume work, Path jobDir, LlmSession session) {
    if (containerId != null) {
      try {
        docker.remove(containerId);
      } catch (RuntimeException e) {
        unremovedContainer = containerId;
        LOG.log(
            System.Logger.Level.WARNING,
            "cannot remove container of job "
                + jobId()
                + " (removed once the "
                + "engine answers): "
                + e.getMessage());
      }
    }
    if (session != null) {
      session.deleteNotice();
    }
    work.release();
    try {
      Files.deleteIfExists(jobDir.resolve("egress"));
      Files.deleteIfExists(jobDir);
    } catch (IOException e) {
      LOG.log(System.Logger.Level.WARNING, "cannot remove " + jobDir + ": " + e.getMessage());
    }
  }

  private static void closeQuietly(AutoCloseable closeable) {
    if (closeable == null) {
      return;
    }
    try {
      closeable.close();
    } catch (Exception e) {
      LOG.log(System.Logger.Level.WARNING, "cannot close " + closeable + ": " + e);
    }
  }

  private static void closeQuietly(LogPump pump) {
    try {
      pump.close(STOP_GRACE.toMillis());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
