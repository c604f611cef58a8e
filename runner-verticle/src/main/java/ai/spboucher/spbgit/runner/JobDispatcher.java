package ai.spboucher.spbgit.runner;

import ai.spboucher.spbgit.proto.CancelJob;
import ai.spboucher.spbgit.proto.JobEvent;
import ai.spboucher.spbgit.proto.JobRequest;
import ai.spboucher.spbgit.proto.JobStatus;
import ai.spboucher.spbgit.proto.Subjects;
import ai.spboucher.spbgit.runner.docker.DockerSandbox;
import ai.spboucher.spbgit.runner.docker.SandboxSpec;
import ai.spboucher.spbgit.runner.docker.WorkVolume;
import ai.spboucher.spbgit.runner.model.ProviderClient;
import ai.spboucher.spbgit.runner.nats.EventPublisher;
import ai.spboucher.spbgit.runner.nats.NatsLink;
import ai.spboucher.spbgit.runner.nats.RefusalReports;
import ai.spboucher.spbgit.runner.trust.JobRequestCheck;
import com.github.dockerjava.api.model.Container;
import io.nats.client.Dispatcher;
import io.nats.client.JetStreamApiException;
import io.nats.client.JetStreamSubscription;
import io.nats.client.Message;
import io.nats.client.PullSubscribeOptions;
import io.vertx.core.Vertx;
import io.vertx.core.net.PemTrustOptions;
import io.vertx.core.net.TrustOptions;
import java.io.IOException;
import java.security.GeneralSecurityException;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

/**
 * Takes jobs from the shared JetStream work queue, never more than the free slots, and runs each as
 * a {@link JobExecution} on its own thread. A job is acknowledged as soon as it is taken, so a job
 * runs at most once: if this runner dies mid-job, its restart finds the leftover container and
 * reports {@code runner_lost}. Before anything else is done with a request or a cancel, {@link
 * RequestIntake} admits it: signed by the gateway, no replay, sealed to this runner.
 *
 * <p>Threading: the fetch loop owns one thread; jobs run on a pool of {@code slots} threads; cancel
 * requests arrive on a NATS dispatcher thread.
 */
final class JobDispatcher {

  private static final System.Logger LOG = System.getLogger(JobDispatcher.class.getName());
  private static final Duration FETCH_WAIT = Duration.ofSeconds(1);

  private final RunnerConfig config;

  /** Serves the jobs' sockets. */
  private final Vertx vertx;

  private final DockerSandbox docker;
  private final NatsLink nats;
  private final Clock clock;

  /** The model provider's client, shared by this runner's llm jobs; null without a provider. */
  private final ProviderClient provider;

  /** The CAs of an https gateway; null for the JDK's default trust store. */
  private final TrustOptions gatewayTrust;

  private final Semaphore freeSlots;
  private final ExecutorService jobs;
  private final Map<String, JobExecution> running = new ConcurrentHashMap<>();

  /**
   * Containers of ended jobs that could not be removed when they ended, because the engine was
   * away.
   */
  private final Set<String> unremoved = ConcurrentHashMap.newKeySet();

  /** Whether the Docker engine answered the fetch loop's last ping. */
  private volatile boolean engineAnswers = true;

  private volatile boolean stopping;
  private Thread fetchLoop;
  private Dispatcher cancels;

  /** The images this runner offers, by catalogue name: it pulls from their consumers only. */
  private final Map<String, ImageCatalogue.Offered> images;

  private final JobCache cache;
  private final RequestIntake intake;

  /** Blocking: reads {@code SPB_GATEWAY_CA} if set. */
  JobDispatcher(
      Vertx vertx,
      RunnerConfig config,
      DockerSandbox docker,
      NatsLink nats,
      Clock clock,
      Map<String, ImageCatalogue.Offered> images,
      JobRequestCheck check)
      throws IOException, GeneralSecurityException {
    this.config = config;
    this.vertx = vertx;
    this.images = Map.copyOf(images);
    this.cache =
        new JobCache(
            config.workRoot().resolve("cache"), config.cacheBytes(), config.cacheEntryBytes());
    this.docker = docker;
    this.nats = nats;
    this.clock = clock;
    this.intake =
        new RequestIntake(
            check,
            new RefusalReports(nats.jetStream(), config.runnerId(), clock),
            nats,
            running::containsKey);
    this.provider = config.model() == null ? null : new ProviderClient(config.model());
    this.gatewayTrust = gatewayTrust(vertx, config);
    this.freeSlots = new Semaphore(config.slots());
    this.jobs =
        Executors.newFixedThreadPool(
            config.slots(),
            r -> {
              Thread t = new Thread(r, "spb-job");
              t.setDaemon(true);
              return t;
            });
  }

  /**
   * The gateway's CA as Vert.x trust, read once here so that an unreadable CA file stops the runner
   * at start.
   */
  private static TrustOptions gatewayTrust(Vertx vertx, RunnerConfig config)
      throws GeneralSecurityException {
    if (config.gatewayCa() == null) {
      return null;
    }
    PemTrustOptions trust = new PemTrustOptions().addCertPath(config.gatewayCa().toString());
    try {
      trust.getTrustManagerFactory(vertx);
    } catch (Exception e) {
      throw new GeneralSecurityException(
          "cannot read the gateway CA " + config.gatewayCa() + ": " + e.getMessage(), e);
    }
    return trust;
  }

  /**
   * Removes containers a previous run of this runner left behind and reports their jobs lost.
   * Blocking.
   */
  void reclaimLeftovers() throws IOException {
    for (Container leftover : docker.containersOf(config.runnerId())) {
      String jobId = leftover.getLabels().get(SandboxSpec.JOB_LABEL);
      LOG.log(
          System.Logger.Level.WARNING,
          "removing leftover container " + leftover.getId() + " of job " + jobId);
      docker.remove(leftover.getId());
      if (jobId == null) {
        continue;
      }
      JobEvent last = intake.lastStatus(jobId);
      if (last != null && last.getStatus().getStatus() == JobStatus.FINISHED) {
        continue; // The runner died while cleaning up after a job that had already ended.
      }
      new EventPublisher(nats.jetStream(), jobId, clock, last == null ? 0 : last.getSequence())
          .status(
              JobStatus.FINISHED,
              ExitReason.RUNNER_LOST,
              config.runnerId(),
              leftover.getId(),
              "the runner restarted while the job was running");
    }
    WorkVolume.releaseLeftovers(config.workRoot());
  }

  void start() {
    cancels = nats.connection().createDispatcher(this::onCancel);
    cancels.subscribe(Subjects.CANCEL_PREFIX + ">");
    fetchLoop = new Thread(this::fetchJobs, "spb-fetch");
    fetchLoop.setDaemon(true);
    fetchLoop.start();
  }

  /**
   * Pulls from the consumer of each offered image in turn, one request per fetch and only with a
   * slot free. With several images each pull waits {@code FETCH_WAIT / images}, so a request of any
   * image waits at most about {@code FETCH_WAIT} for its turn.
   */
  private void fetchJobs() {
    List<JetStreamSubscription> subscriptions = null;
    Duration wait = FETCH_WAIT.dividedBy(images.size());
    int next = 0;
    while (!stopping) {
      try {
        if (subscriptions == null) {
          nats.ensureStreams();
          subscriptions = subscribe();
        }
        freeSlots.acquire();
        if (!engineReady()) {
          freeSlots.release();
          sleep(1000);
          continue;
        }
        List<Message> batch;
        try {
          // One request per fetch: a fetch for several returns only once it has them all or its
          // wait is over,
          // which would hold a request that arrives alone for up to its wait although a slot is
          // free.
          batch = subscriptions.get(next).fetch(1, wait);
          next = (next + 1) % subscriptions.size();
        } catch (RuntimeException e) {
          freeSlots.release();
          throw e;
        }
        if (batch.isEmpty()) {
          freeSlots.release();
        }
        batch.forEach(this::take);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      } catch (Exception e) {
        LOG.log(System.Logger.Level.WARNING, "cannot fetch jobs (retrying): " + e.getMessage());
        subscriptions = null;
        sleep(1000);
      }
    }
  }

  /**
   * Binds to the durable consumer of every offered image, creating those that are missing.
   * Blocking.
   */
  private List<JetStreamSubscription> subscribe() throws IOException, JetStreamApiException {
    List<JetStreamSubscription> subscriptions = new ArrayList<>();
    for (String image : images.keySet()) {
      nats.ensureRunnersConsumer(image);
      subscriptions.add(
          nats.jetStream()
              .subscribe(
                  Subjects.jobRequests(image),
                  PullSubscribeOptions.bind(
                      Subjects.JOBS_STREAM, Subjects.runnersConsumer(image))));
    }
    return subscriptions;
  }

  /**
   * Whether the Docker engine answers, so a job taken now can run: while it does not, this runner
   * takes no jobs it could only fail. Once it answers, first removes the containers that jobs
   * ending meanwhile could not.
   */
  private boolean engineReady() {
    if (!docker.answers()) {
      if (engineAnswers) {
        LOG.log(
            System.Logger.Level.WARNING,
            "the Docker engine at "
                + config.dockerHost()
                + " does not answer: taking no jobs until it does");
        engineAnswers = false;
      }
      return false;
    }
    if (!engineAnswers) {
      LOG.log(System.Logger.Level.INFO, "the Docker engine answers again");
      engineAnswers = true;
    }
    for (String containerId : unremoved) {
      try {
        docker.remove(containerId);
        unremoved.remove(containerId);
        LOG.log(System.Logger.Level.INFO, "removed container " + containerId + " of an ended job");
      } catch (RuntimeException e) {
        LOG.log(
            System.Logger.Level.WARNING,
            "cannot remove container " + containerId + " yet: " + e.getMessage());
      }
    }
    return true;
  }

  /** Whether this runner can take jobs: the Docker engine answered its last check. */
  boolean engineAnswers() {
    return engineAnswers;
  }

  /** Called with a slot already reserved for the message. */
  private void take(Message message) {
    RequestIntake.Admitted admitted = intake.take(message);
    if (admitted == null) {
      freeSlots.release();
      return;
    }
    JobRequest request = admitted.request();
    String jobId = request.getJobId();
    EventPublisher events = new EventPublisher(nats.jetStream(), nats.management(), jobId, clock);
    JobExecution execution =
        new JobExecution(
            new JobContext(
                vertx,
                config,
                docker,
                provider,
                gatewayTrust,
                request,
                admitted.jobToken(),
                events,
                clock,
                RequestIntake.storedAt(message),
                images,
                cache));
    running.put(jobId, execution);
    LOG.log(System.Logger.Level.INFO, "took job " + jobId + " for " + request.getRepo());
    jobs.execute(
        () -> {
          try {
            execution.run();
          } finally {
            if (execution.unremovedContainer() != null) {
              unremoved.add(execution.unremovedContainer());
            }
            running.remove(jobId);
            freeSlots.release();
          }
        });
  }

  private void onCancel(Message message) {
    CancelJob cancel = intake.cancel(message);
    JobExecution execution = cancel == null ? null : running.get(cancel.getJobId());
    if (execution != null) {
      LOG.log(System.Logger.Level.INFO, "cancelling job " + cancel.getJobId());
      // docker kill blocks; keep the NATS dispatcher thread free for other cancels.
      new Thread(() -> execution.cancel(ExitReason.CANCELLED), "spb-cancel").start();
    }
  }

  /** Stops taking jobs; running ones are stopped and reported lost. Blocking. */
  void stop() {
    stopping = true;
    if (fetchLoop != null) {
      fetchLoop.interrupt();
    }
    if (cancels != null) {
      nats.connection().closeDispatcher(cancels);
    }
    running.values().forEach(execution -> execution.cancel(ExitReason.RUNNER_LOST));
    jobs.shutdown();
    try {
      jobs.awaitTermination(60, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  int runningJobs() {
    return running.size();
  }

  private static void sleep(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
