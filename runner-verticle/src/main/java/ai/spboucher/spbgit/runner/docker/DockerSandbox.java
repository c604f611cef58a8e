package ai.spboucher.spbgit.runner.docker;

import com.github.dockerjava.api.DockerClient;
import com.github.dockerjava.api.async.ResultCallback;
import com.github.dockerjava.api.command.InspectContainerResponse;
import com.github.dockerjava.api.command.InspectImageResponse;
import com.github.dockerjava.api.exception.ConflictException;
import com.github.dockerjava.api.exception.DockerClientException;
import com.github.dockerjava.api.exception.NotFoundException;
import com.github.dockerjava.api.exception.NotModifiedException;
import com.github.dockerjava.api.model.Container;
import com.github.dockerjava.api.model.Frame;
import com.github.dockerjava.core.DefaultDockerClientConfig;
import com.github.dockerjava.core.DockerClientImpl;
import com.github.dockerjava.httpclient5.ApacheDockerHttpClient;
import java.io.Closeable;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;

/**
 * The runner's docker-java calls. Every method blocks on the Docker API: call it from a worker
 * thread. Log frames are delivered on docker-java's stream thread.
 *
 * <p>The short calls (create, start, inspect, kill, remove, list, ping) each fail with {@link
 * EngineNotAnswering} after {@code callTimeout}; the streams a running job holds open for as long
 * as it runs (its output, the engine's events about it, its exit) have no time limit. An engine
 * that is alive but frozen (stopped, swapping, wedged) then fails the calls of a job instead of
 * holding its thread for ever, and the runner's ping says it does not answer. The limit is kept by
 * waiting for each call on another thread: the HTTP client's own response timeout does not apply to
 * the engine's unix socket, and would cut the streams. A call that timed out holds its thread and
 * connection until the engine answers or the connection breaks.
 */
public final class DockerSandbox implements Closeable {

  /**
   * The connections a running job holds open for as long as it runs: its output ({@link #attach}),
   * the engine's events about it ({@link #watch}) and its exit ({@link #awaitExit}).
   */
  static final int STREAMS_PER_JOB = 3;

  /** Connections on top of the jobs' own: cleanup, pings, a burst of starts. */
  static final int SPARE_CONNECTIONS = 16;

  /**
   * How long a short call may take by default: generous, creating many containers at once is slow.
   */
  public static final Duration DEFAULT_CALL_TIMEOUT = Duration.ofMinutes(2);

  private static final int DEFAULT_JOBS = 16;

  /**
   * The agent image's label naming the uid its agent user was built with
   * (docker/job-image/build.sh).
   */
  public static final String UID_LABEL = "spb.agent.uid";

  private static final System.Logger LOG = System.getLogger(DockerSandbox.class.getName());

  private final DockerClient docker;
  private final Duration callTimeout;
  private final ExecutorService calls =
      Executors.newCachedThreadPool(
          runnable -> {
            Thread thread = new Thread(runnable, "docker-call");
            thread.setDaemon(true);
            return thread;
          });

  /**
   * The last ping, while it has not answered: a frozen engine is asked once, not once per check.
   */
  private Future<?> pendingPing;

  /** A client with room for {@value #DEFAULT_JOBS} jobs at once, for tools and tests. */
  public DockerSandbox(String dockerHost) {
    this(dockerHost, DEFAULT_JOBS, DEFAULT_CALL_TIMEOUT);
  }

  /**
   * A client with enough connections for {@code jobs} jobs running at once (a runner's slots), so
   * no job waits for a connection another job's stream holds; a short call fails after {@code
   * callTimeout}.
   */
  public DockerSandbox(String dockerHost, int jobs, Duration callTimeout) {
    DefaultDockerClientConfig config =
        DefaultDockerClientConfig.createDefaultConfigBuilder().withDockerHost(dockerHost).build();
    this.docker =
        DockerClientImpl.getInstance(
            config,
            new ApacheDockerHttpClient.Builder()
                .dockerHost(config.getDockerHost())
                .maxConnections(connectionsFor(jobs))
                .connectionTimeout(Duration.ofSeconds(10))
                .build());
    this.callTimeout = callTimeout;
  }

  /**
   * The size of the connection pool for {@code jobs} jobs running at once: their streams, one short
   * call each (which a frozen engine may keep), and spare ones.
   */
  static int connectionsFor(int jobs) {
    return (STREAMS_PER_JOB + 1) * jobs + SPARE_CONNECTIONS;
  }

  /**
   * A short call that did not answer within the call timeout: the engine is frozen or overloaded.
   */
  public static final class EngineNotAnswering extends RuntimeException {

    private static final long serialVersionUID = 1L;

    EngineNotAnswering(String message) {
      super(message);
    }
  }

  private <T> T bounded(String what, Callable<T> call) {
    return await(what, calls.submit(call));
  }

  private <T> T await(String what, Future<T> call) {
    try {
      return call.get(callTimeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (TimeoutException e) {
      throw new EngineNotAnswering(
          "the Docker engine did not answer "
              + what
              + " within "
              + callTimeout.toSeconds()
              + " s (SPB_DOCKER_CALL_TIMEOUT)");
    } catch (ExecutionException e) {
      if (e.getCause() instanceof RuntimeException failure) {
        throw failure;
      }
      if (e.getCause() instanceof Error error) {
        throw error;
      }
      throw new IllegalStateException(e.getCause());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(
          "interrupted while waiting for the Docker engine (" + what + ")", e);
    }
  }

  /** Pings, or goes on waiting for a ping that has not answered yet. */
  private void ping() {
    Future<?> ping;
    synchronized (this) {
      if (pendingPing == null || pendingPing.isDone()) {
        pendingPing = calls.submit(() -> docker.pingCmd().exec());
      }
      ping = pendingPing;
    }
    await("a ping", ping);
  }

  /**
   * Fails fast when the engine is unreachable, the agent image is missing, or its {@value
   * #UID_LABEL} label names another uid than {@code uid}, the one containers run as (its agent user
   * and {@code HOME} would then be someone else's). An image without the label (not built by
   * docker/job-image/build.sh) is taken on trust.
   */
  public void check(String image, int uid) {
    ping();
    if (imageId(image, uid) == null) {
      throw new IllegalStateException(
          "agent image " + image + " is missing: build it with docker/job-image/build.sh");
    }
  }

  /**
   * The image's id ({@code sha256:...}, the digest of its configuration: what it runs, whatever tag
   * names it), or null when the engine does not have it; fails when it was built for another uid
   * than {@code uid} (see {@link #check}).
   */
  public String imageId(String image, int uid) {
    InspectImageResponse inspected;
    try {
      inspected = bounded("an image inspection", () -> docker.inspectImageCmd(image).exec());
    } catch (NotFoundException e) {
      return null;
    }
    Map<String, String> labels =
        inspected.getConfig() == null ? null : inspected.getConfig().getLabels();
    String built = labels == null ? null : labels.get(UID_LABEL);
    if (built == null) {
      LOG.log(
          System.Logger.Level.WARNING,
          "agent image "
              + image
              + " has no "
              + UID_LABEL
              + " label: make sure "
              + "its agent user has uid "
              + uid
              + " (SPB_SANDBOX_UID)");
    } else if (!built.equals(Integer.toString(uid))) {
      throw new IllegalStateException(
          "agent image "
              + image
              + " was built for uid "
              + built
              + " but "
              + "SPB_SANDBOX_UID is "
              + uid
              + ": rebuild it with SPB_SANDBOX_UID="
              + uid
              + " docker/job-image/build.sh");
    }
    return inspected.getId();
  }

  /**
   * The labels of {@code image} as the engine has it (empty when it has none); fails when the
   * engine lacks the image.
   */
  public Map<String, String> imageLabels(String image) {
    InspectImageResponse inspected =
        bounded("an image inspection", () -> docker.inspectImageCmd(image).exec());
    Map<String, String> labels =
        inspected.getConfig() == null ? null : inspected.getConfig().getLabels();
    return labels == null ? Map.of() : Map.copyOf(labels);
  }

  /** Whether the engine answers a ping now. */
  public boolean answers() {
    try {
      ping();
      return true;
    } catch (RuntimeException e) {
      return false;
    }
  }

  /** Creates (not starts) the job's container; returns its id. */
  public String create(SandboxSpec spec) {
    return create(spec, "");
  }

  /**
   * Creates (not starts) a container of one of the job's phases, named {@code
   * spb-job-<job><suffix>} (the phases run one after another, each in a container of its own);
   * returns its id.
   */
  public String create(SandboxSpec spec, String nameSuffix) {
    return bounded(
        "the creation of a container",
        () ->
            docker
                .createContainerCmd(spec.image())
                .withName("spb-job-" + spec.jobId() + nameSuffix)
                .withLabels(spec.labels())
                .withEnv(spec.environment())
                .withUser(spec.user())
                .withWorkingDir("/work")
                .withNetworkDisabled(true)
                .withHostConfig(spec.hostConfig())
                .exec()
                .getId());
  }

  public void start(String containerId) {
    bounded("the start of a container", () -> docker.startContainerCmd(containerId).exec());
  }

  /**
   * Attaches to the container's stdout and stderr; call before {@link #start}, so the stream
   * carries every byte from the first one (following the log file instead can miss output written
   * while it switches from the file's history to live data). The returned handle detaches.
   */
  public Closeable attach(String containerId, Consumer<Frame> onFrame, Runnable onEnd)
      throws InterruptedException, IOException {
    ResultCallback.Adapter<Frame> callback =
        docker
            .attachContainerCmd(containerId)
            .withFollowStream(true)
            .withStdOut(true)
            .withStdErr(true)
            .withLogs(true)
            .exec(
                new ResultCallback.Adapter<Frame>() {
                  @Override
                  public void onNext(Frame frame) {
                    onFrame.accept(frame);
                  }

                  @Override
                  public void onComplete() {
                    onEnd.run();
                  }

                  @Override
                  public void onError(Throwable throwable) {
                    onEnd.run();
                  }
                });
    if (!callback.awaitStarted(30, TimeUnit.SECONDS)) {
      callback.close();
      throw new IllegalStateException("could not attach to container " + containerId);
    }
    return callback;
  }

  /**
   * Follows the engine's reports of signals sent to the container and of its death; before {@link
   * #start}.
   */
  public ContainerWatch watch(String containerId) throws InterruptedException, IOException {
    return ContainerWatch.start(docker, containerId);
  }

  /**
   * Waits for the container to stop, up to {@code timeout}; returns its exit code, or null on
   * timeout.
   */
  public Long awaitExit(String containerId, Duration timeout) {
    try {
      Integer code =
          docker
              .waitContainerCmd(containerId)
              .start()
              .awaitStatusCode(timeout.toMillis(), TimeUnit.MILLISECONDS);
      return code == null ? null : code.longValue();
    } catch (DockerClientException e) {
      if (e.getMessage() != null && e.getMessage().contains("timeout")) {
        return null;
      }
      throw e;
    }
  }

  public InspectContainerResponse inspect(String containerId) {
    return bounded(
        "an inspection of a container", () -> docker.inspectContainerCmd(containerId).exec());
  }

  /** Kills the container if it is still running. */
  public void kill(String containerId) {
    try {
      bounded("a kill of a container", () -> docker.killContainerCmd(containerId).exec());
    } catch (NotFoundException | NotModifiedException | ConflictException e) {
      // Already stopped or gone: nothing to kill.
    }
  }

  /** Removes the container, running or not. */
  public void remove(String containerId) {
    try {
      bounded(
          "the removal of a container",
          () ->
              docker
                  .removeContainerCmd(containerId)
                  .withForce(true)
                  .withRemoveVolumes(true)
                  .exec());
    } catch (NotFoundException e) {
      // Already removed.
    }
  }

  /** Containers (in any state) carrying this runner's label. */
  public List<Container> containersOf(String runnerId) {
    return bounded(
        "a list of containers",
        () ->
            docker
                .listContainersCmd()
                .withShowAll(true)
                .withLabelFilter(Map.of(SandboxSpec.RUNNER_LABEL, runnerId))
                .exec());
  }

  /**
   * The client for short calls, for tools and tests (its calls are not bounded by the call
   * timeout).
   */
  public DockerClient client() {
    return docker;
  }

  @Override
  public void close() throws IOException {
    calls.shutdownNow();
    docker.close();
  }
}
