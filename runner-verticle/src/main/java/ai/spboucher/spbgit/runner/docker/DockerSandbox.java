package ai.spboucher.spbgit.runner.docker;

import com.github.dockerjava.api.DockerClient;
import com.github.dockerjava.api.async.ResultCallback;
import com.github.dockerjava.api.command.InspectContainerResponse;
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
import java.util.function.Consumer;

/**
 * The runner's docker-java calls. Every method blocks on the Docker API: call it from a worker thread. Log
 * frames are delivered on docker-java's stream thread.
 */
public final class DockerSandbox implements Closeable {

  /**
   * The connections a running job holds open for as long as it runs: its output ({@link #attach}), the engine's
   * events about it ({@link #watch}) and its exit ({@link #awaitExit}).
   */
  static final int STREAMS_PER_JOB = 3;
  /** Connections on top of the jobs' streams: creating, starting, inspecting and removing containers, pings. */
  static final int SPARE_CONNECTIONS = 16;
  private static final int DEFAULT_JOBS = 16;

  private final DockerClient docker;

  /** A client with room for {@value #DEFAULT_JOBS} jobs at once, for tools and tests. */
  public DockerSandbox(String dockerHost) {
    this(dockerHost, DEFAULT_JOBS);
  }

  /**
   * A client with enough connections for {@code jobs} jobs running at once (a runner's slots), so no job waits
   * for a connection another job's stream holds.
   */
  public DockerSandbox(String dockerHost, int jobs) {
    DefaultDockerClientConfig config = DefaultDockerClientConfig.createDefaultConfigBuilder()
        .withDockerHost(dockerHost).build();
    ApacheDockerHttpClient http = new ApacheDockerHttpClient.Builder()
        .dockerHost(config.getDockerHost())
        .maxConnections(connectionsFor(jobs))
        .connectionTimeout(Duration.ofSeconds(10))
        .build();
    this.docker = DockerClientImpl.getInstance(config, http);
  }

  /** The size of the connection pool for {@code jobs} jobs running at once. */
  static int connectionsFor(int jobs) {
    return STREAMS_PER_JOB * jobs + SPARE_CONNECTIONS;
  }

  /** Fails fast when the engine is unreachable or the agent image is missing. */
  public void check(String image) {
    docker.pingCmd().exec();
    try {
      docker.inspectImageCmd(image).exec();
    } catch (NotFoundException e) {
      throw new IllegalStateException("agent image " + image + " is missing: build it with docker/agent/build.sh");
    }
  }

  /** Whether the engine answers a ping now. */
  public boolean answers() {
    try {
      docker.pingCmd().exec();
      return true;
    } catch (RuntimeException e) {
      return false;
    }
  }

  /** Creates (not starts) the job's container; returns its id. */
  public String create(SandboxSpec spec) {
    return docker.createContainerCmd(spec.image())
        .withName("spb-job-" + spec.jobId())
        .withLabels(spec.labels())
        .withEnv(spec.environment())
        .withUser(SandboxSpec.CONTAINER_UID)
        .withWorkingDir("/work")
        .withNetworkDisabled(true)
        .withHostConfig(spec.hostConfig())
        .exec()
        .getId();
  }

  public void start(String containerId) {
    docker.startContainerCmd(containerId).exec();
  }

  /**
   * Attaches to the container's stdout and stderr; call before {@link #start}, so the stream carries every byte
   * from the first one (following the log file instead can miss output written while it switches from the
   * file's history to live data). The returned handle detaches.
   */
  public Closeable attach(String containerId, Consumer<Frame> onFrame, Runnable onEnd)
      throws InterruptedException, IOException {
    ResultCallback.Adapter<Frame> callback = docker.attachContainerCmd(containerId).withFollowStream(true)
        .withStdOut(true).withStdErr(true).withLogs(true)
        .exec(new ResultCallback.Adapter<Frame>() {
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
    if (!callback.awaitStarted(30, java.util.concurrent.TimeUnit.SECONDS)) {
      callback.close();
      throw new IllegalStateException("could not attach to container " + containerId);
    }
    return callback;
  }

  /** Follows the engine's reports of signals sent to the container and of its death; before {@link #start}. */
  public ContainerWatch watch(String containerId) throws InterruptedException, IOException {
    return ContainerWatch.start(docker, containerId);
  }

  /** Waits for the container to stop, up to {@code timeout}; returns its exit code, or null on timeout. */
  public Long awaitExit(String containerId, Duration timeout) {
    try {
      Integer code = docker.waitContainerCmd(containerId).start()
          .awaitStatusCode(timeout.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS);
      return code == null ? null : code.longValue();
    } catch (com.github.dockerjava.api.exception.DockerClientException e) {
      if (e.getMessage() != null && e.getMessage().contains("timeout")) {
        return null;
      }
      throw e;
    }
  }

  public InspectContainerResponse inspect(String containerId) {
    return docker.inspectContainerCmd(containerId).exec();
  }

  /** Kills the container if it is still running. */
  public void kill(String containerId) {
    try {
      docker.killContainerCmd(containerId).exec();
    } catch (NotFoundException | NotModifiedException | com.github.dockerjava.api.exception.ConflictException e) {
      // Already stopped or gone: nothing to kill.
    }
  }

  /** Removes the container, running or not. */
  public void remove(String containerId) {
    try {
      docker.removeContainerCmd(containerId).withForce(true).withRemoveVolumes(true).exec();
    } catch (NotFoundException e) {
      // Already removed.
    }
  }

  /** Containers (in any state) carrying this runner's label. */
  public List<Container> containersOf(String runnerId) {
    return docker.listContainersCmd().withShowAll(true)
        .withLabelFilter(java.util.Map.of(SandboxSpec.RUNNER_LABEL, runnerId)).exec();
  }

  public DockerClient client() {
    return docker;
  }

  @Override
  public void close() throws IOException {
    docker.close();
  }
}
