package ai.spboucher.spbgit.runner;

import ai.spboucher.spbgit.proto.CacheOutcome;
import ai.spboucher.spbgit.proto.Environment;
import ai.spboucher.spbgit.proto.JobRequest;
import ai.spboucher.spbgit.proto.Mode;
import ai.spboucher.spbgit.runner.docker.DockerSandbox;
import ai.spboucher.spbgit.runner.docker.WorkVolume;
import ai.spboucher.spbgit.runner.egress.EgressProxy;
import ai.spboucher.spbgit.runner.egress.EgressRecord;
import ai.spboucher.spbgit.runner.git.GitRelay;
import ai.spboucher.spbgit.runner.model.ProviderClient;
import ai.spboucher.spbgit.runner.nats.BackgroundEvents;
import ai.spboucher.spbgit.runner.nats.EventMessages;
import ai.spboucher.spbgit.runner.nats.EventPublisher;
import io.vertx.core.Vertx;
import io.vertx.core.net.TrustOptions;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.Future;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * One job's request, the runner's parts it uses, and the facts of its run in one place, shared by
 * the phases of a {@link JobExecution}.
 *
 * <p>Threading: the phases read and write it on the job's one worker thread. {@link
 * JobExecution#cancel} writes {@link #cancelReason} and reads {@link #containerId} from any thread;
 * the egress proxies and the git relay read {@link #phase} on Vert.x event loops; the dispatcher
 * reads {@link #unremovedContainer} once the run has returned. Those fields are volatile; the rest
 * is the job thread's alone.
 */
final class JobContext {

  /** How long a container gets to stop, its log stream to end and the job's events to publish. */
  static final Duration STOP_GRACE = Duration.ofSeconds(30);

  /** Serves the job's sockets; null only for a job refused before any socket opens. */
  final Vertx vertx;

  final RunnerConfig config;
  final DockerSandbox docker;

  /** The runner's model provider; null when it has none. */
  final ProviderClient provider;

  /** The CAs of an https gateway; null for the JDK's default trust store. */
  final TrustOptions gatewayTrust;

  final JobRequest request;

  /** The job token, opened from the request's copy sealed to this runner; never logged. */
  final String jobToken;

  final EventPublisher events;
  final Clock clock;

  /** When JetStream stored the request, by the NATS server's clock; null when unknown. */
  final Instant queuedAt;

  /** The images this runner offers, by catalogue name. */
  final Map<String, ImageCatalogue.Offered> images;

  final JobCache cache;

  /** The container of the phase running now; null before the first and between phases. */
  volatile String containerId;

  volatile String cancelReason;

  /**
   * Set before the runner itself kills the container (its wall clock ran out, or a grace period
   * ended).
   */
  volatile boolean killedByRunner;

  /** The job's container when removing it failed (the engine was away): the dispatcher retries. */
  volatile String unremovedContainer;

  /** The phase the agent-side proxy and git relay serve now: clone, then agent. */
  volatile String phase = EventMessages.PHASE_AGENT;

  // Set once the job is admitted ({@link #begin}).
  Admission admission;
  Path jobDir;
  WorkVolume work;
  LogPump pump;
  BackgroundEvents background;

  // Set by PreparePhase.
  Path egressDir;
  boolean mounted;
  EgressProxy proxy;
  GitRelay git;
  LlmSession session;
  RefusalNotes refusals;

  /** The setup phase's own proxy, admitting only {@code setup_egress}; null but during setup. */
  EgressProxy setupProxy;

  CacheOutcome cacheOutcome = CacheOutcome.CACHE_NONE;

  /** The repository cache's key when the clone phase computed one and it missed; null otherwise. */
  String missedKey;

  /** The hit's key and producer, whether the cache was kept, what setup changed. */
  final SetupFacts setupFacts = new SetupFacts();

  /**
   * The cache was restored before any clone: the agent container clones the base commit into the
   * restored {@code /work/repo} itself.
   */
  boolean clonesInAgent;

  /** The restore of a {@link #clonesInAgent} hit, extracting on the run's restorer; else null. */
  Future<?> restoring;

  /** Whether STARTED was published. */
  boolean started;

  /**
   * @param jobToken the job token, opened from the request's sealed copy; empty for a job that
   *     cannot push
   * @param queuedAt when JetStream stored the request (its metadata timestamp), for {@link
   *     JobDeadline}; null when unknown: the deadline is then judged by this runner's clock alone
   */
  JobContext(
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
    this.config = config;
    this.docker = docker;
    this.provider = provider;
    this.gatewayTrust = gatewayTrust;
    this.request = request;
    this.jobToken = jobToken;
    this.events = events;
    this.clock = clock;
    this.queuedAt = queuedAt;
    this.images = images;
    this.cache = cache;
  }

  /** The admitted job's place on this runner: its directory, work volume and log. */
  void begin(Admission admitted) {
    this.admission = admitted;
    this.jobDir = config.workRoot().resolve(jobId());
    this.work = new WorkVolume(jobDir.resolve("work"), diskLimit(), config.sandboxUid());
    this.pump = new LogPump(events::log, jobId(), config.logCapBytes());
    this.background = new BackgroundEvents(events, jobId());
  }

  String jobId() {
    return request.getJobId();
  }

  boolean llm() {
    return request.getMode() == Mode.MODE_LLM;
  }

  /** An llm job, or an exec job that asked for the model endpoint ({@code exec_model}). */
  boolean usesModel() {
    return llm() || request.getExecModel();
  }

  Environment environment() {
    return request.getEnvironment();
  }

  /** An environment with a setup script: clone and setup (or the cache) before the agent. */
  boolean phased() {
    return !environment().getSetup().isEmpty();
  }

  /** What is left of the job's wall clock. */
  Duration remaining() {
    return Duration.between(clock.instant(), admission.end());
  }

  long diskLimit() {
    long asked = request.getLimits().getDiskBytes();
    return asked > 0 ? Math.min(asked, config.diskBytes()) : config.diskBytes();
  }

  /** Publishes STARTED once, for the first container the job's own code runs in. */
  void publishStarted(String id) {
    if (!started) {
      started = true;
      Admission.Agent agent = admission.agent();
      events.started(
          config.runnerId(),
          id,
          admission.image().digest(),
          cacheOutcome,
          agent == null ? "" : agent.agent().id(),
          agent == null ? "" : agent.version(),
          setupFacts.started());
    }
  }

  /**
   * Publishes each attempt as an egress event of the phase at the time, and logs the refused ones.
   */
  Consumer<EgressRecord> published(String via, Supplier<String> phaseNow) {
    return record -> {
      background.egress(EventMessages.egress(record, via, phaseNow.get()));
      refusals.note(record);
    };
  }

  static void closeQuietly(AutoCloseable closeable) {
    if (closeable == null) {
      return;
    }
    try {
      closeable.close();
    } catch (Exception e) {
      System.getLogger(JobContext.class.getName())
          .log(System.Logger.Level.WARNING, "cannot close " + closeable + ": " + e);
    }
  }
}
