package ai.spboucher.spbgit.runner;

import ai.spboucher.spbgit.common.TaskSanitizer;
import ai.spboucher.spbgit.proto.JobRequest;
import ai.spboucher.spbgit.proto.JobStatus;
import ai.spboucher.spbgit.proto.Mode;
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
import java.util.concurrent.ExecutionException;
import java.util.function.Consumer;

/**
 * One job on this runner, from taking it to removing its container: a size-capped work volume, an
 * egress proxy admitting only the job's allow-list, for llm jobs an {@link LlmSession} (model
 * endpoint, token meter, breach notice), one fresh hardened container, its output, egress attempts
 * and model calls streamed as events, and an exit reason decided from what the runner observed.
 * {@link #run} blocks for the job's whole life on one worker thread; {@link #cancel} may be called
 * from any thread.
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
  private final EventPublisher events;
  private final Clock clock;

  /** When JetStream stored the request, by the NATS server's clock; null when unknown. */
  private final Instant queuedAt;

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
    this(vertx, config, docker, provider, gatewayTrust, request, events, clock, null);
  }

  /**
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
      EventPublisher events,
      Clock clock,
      Instant queuedAt) {
    this.vertx = vertx;
    this.queuedAt = queuedAt;
    this.config = config;
    this.docker = docker;
    this.provider = provider;
    this.gatewayTrust = gatewayTrust;
    this.request = request;
    this.events = events;
    this.clock = clock;
  }

  private boolean llm() {
    return request.getMode() == Mode.MODE_LLM;
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

  void run() {
    String model;
    TaskSanitizer.Sanitized task = TaskSanitizer.visible(request.getTask());
    try {
      model = llm() ? jobModel() : null;
      if (llm() && task.text().isEmpty()) {
        throw new IllegalArgumentException(
            "the task has no visible text once its hidden characters and HTML "
                + "comments are removed");
      }
    } catch (IllegalArgumentException e) {
      events.status(
          JobStatus.FINISHED, ExitReason.RUNNER_ERROR, config.runnerId(), "", e.getMessage());
      return;
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
      return;
    }
    Path jobDir = config.workRoot().resolve(jobId());
    WorkVolume work = new WorkVolume(jobDir.resolve("work"), diskLimit(), config.sandboxUid());
    EgressProxy proxy = null;
    GitRelay git = null;
    LlmSession session = null;
    LogPump pump = new LogPump(events::log, jobId(), config.logCapBytes());
    BackgroundEvents background = new BackgroundEvents(events, jobId());
    String reason = ExitReason.RUNNER_ERROR;
    String detail = "";
    try {
      Path egressDir = Files.createDirectories(jobDir.resolve("egress"));
      Files.setPosixFilePermissions(egressDir, PosixFilePermissions.fromString("rwxr-xr-x"));
      boolean mounted = work.mount();
      RefusalNotes refusals = new RefusalNotes(pump);
      proxy =
          EgressProxy.start(
              vertx,
              egressDir.resolve("egress.sock"),
              EgressPolicy.of(allowList()),
              new EgressRecorder(published(background, refusals, EventMessages.VIA_PROXY)));
      git =
          GitRelay.start(
              vertx,
              egressDir.resolve(GitRelay.SOCKET_NAME),
              URI.create(request.getCloneUrl()),
              request.getJobToken(),
              gatewayTrust,
              published(background, refusals, EventMessages.VIA_GIT_RELAY));
      if (model != null) {
        session =
            LlmSession.open(
                vertx, provider, model, jobDir, egressDir, config.sandboxUid(), background);
      }
      if (task.hiddenCharacters() + task.htmlComments() > 0) {
        pump.runnerLine(
            "task: removed "
                + task.hiddenCharacters()
                + " hidden characters and "
                + task.htmlComments()
                + " HTML comments before the job saw it");
      }
      SandboxSpec spec =
          SandboxSpec.builder()
              .image(config.agentImage())
              .jobId(jobId())
              .runnerId(config.runnerId())
              .uid(config.sandboxUid())
              .env(environment(git, session, task.text()))
              .cpus(Math.min(limit(request.getLimits().getCpus(), config.cpus()), config.cpus()))
              .memoryBytes((long) limit(request.getLimits().getMemoryBytes(), config.memoryBytes()))
              .pidsLimit((long) limit(request.getLimits().getPids(), config.pidsLimit()))
              .workDir(work.dir())
              .egressDir(egressDir)
              .workIsMounted(mounted)
              .diskBytes(diskLimit())
              .noticeDir(session == null ? null : session.noticeDir())
              .build();
      containerId = docker.create(spec);
      if (cancelReason != null) {
        // Cancelled while the container was being prepared: it never starts.
        reason = cancelReason;
        pump.runnerLine("job ended before it started: " + reason);
        return;
      }
      Closeable logs = null;
      ContainerWatch watch = null;
      try {
        pump.runnerLine(
            "job "
                + jobId()
                + " starting in container "
                + containerId.substring(0, 12)
                + " on runner "
                + config.runnerId()
                + " (wall clock limit "
                + wall.toSeconds()
                + " s, egress "
                + proxy.policy().entries()
                + (session == null ? "" : ", " + session.describe())
                + ")");
        logs = docker.attach(containerId, pump::offer, pump::dockerStreamEnded);
        watch = docker.watch(containerId);
        docker.start(containerId);
        events.status(JobStatus.STARTED, "", config.runnerId(), containerId, "");
        reason = awaitOutcome(wall, work, pump, session, watch);
      } finally {
        pump.awaitDockerStreamEnd(STOP_GRACE.toMillis());
        if (logs != null) {
          logs.close();
        }
        closeQuietly(watch);
      }
      pump.runnerLine("job ended: " + reason);
    } catch (StoppedFromOutside e) {
      LOG.log(System.Logger.Level.WARNING, "job " + jobId() + ": " + e.getMessage());
      reason = ExitReason.RUNNER_ERROR;
      detail = e.getMessage();
      pump.runnerLine("runner error: " + detail);
    } catch (Exception e) {
      LOG.log(System.Logger.Level.ERROR, "job " + jobId() + " failed in the runner", e);
      reason = ExitReason.RUNNER_ERROR;
      detail =
          containerId != null && lostTheEngine(e)
              ? "lost the Docker engine while the job was running (it stopped or restarted): "
                  + e.getMessage()
              : String.valueOf(e.getMessage());
      pump.runnerLine("runner error: " + detail);
    } finally {
      // Closed before FINISHED, so every model call and egress attempt is metered and published by
      // then.
      closeQuietly(session);
      closeQuietly(git);
      closeQuietly(proxy);
      if (session != null && ExitReason.PROVIDER_ERROR.equals(reason)) {
        // Read once the session is closed: by then the call the agent gave up on is recorded.
        detail = session.providerErrorDetail();
        pump.runnerLine(detail);
      }
      flush(background, pump);
      if (session != null) {
        pump.runnerLine(session.describeSpend());
      }
      closeQuietly(pump);
      events.status(
          JobStatus.FINISHED,
          reason,
          config.runnerId(),
          containerId == null ? "" : containerId,
          detail,
          session == null ? null : session.spend());
      cleanUp(work, jobDir, session);
    }
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

  /** Publishes each attempt as an egress event and logs the refused ones. */
  private static Consumer<EgressRecord> published(
      BackgroundEvents background, RefusalNotes refusals, String via) {
    return record -> {
      background.egress(EventMessages.egress(record, via));
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
            session != null));
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
   * which holds the job token; for llm jobs the model endpoint holds the provider's key. The task
   * is its visible text only ({@link TaskSanitizer#visible}): the entrypoint writes it into the
   * commit message, where hidden characters or an HTML comment would carry instructions no reviewer
   * sees.
   */
  private Map<String, String> environment(GitRelay git, LlmSession session, String visibleTask) {
    Map<String, String> env = new LinkedHashMap<>();
    env.put("SPB_JOB_ID", jobId());
    env.put("SPB_REPO", request.getRepo());
    env.put("SPB_CLONE_URL", SandboxSpec.GIT_URL + git.repoPath());
    env.put("SPB_BASE_REF", request.getBaseRef());
    env.put("SPB_TASK", visibleTask);
    env.put("SPB_MODE", llm() ? "llm" : "exec");
    env.put("SPB_EXEC", request.getExecCommand());
    env.put("SPB_TEST_COMMAND", request.getTestCommand());
    if (session != null) {
      session.addEnvironment(env);
    }
    return env;
  }

  /**
   * The job's extra entries and the runner's own. The gateway is not on it: the job reaches its
   * repository through the git relay only.
   */
  private List<String> allowList() {
    List<String> entries = new ArrayList<>(request.getEgressAllowList());
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
