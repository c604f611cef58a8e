package ai.spboucher.spbgit.testsupport;

import com.github.dockerjava.api.DockerClient;
import com.github.dockerjava.api.exception.ConflictException;
import com.github.dockerjava.api.exception.NotFoundException;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.testcontainers.DockerClientFactory;
import org.testcontainers.containers.BindMode;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.containers.wait.strategy.AbstractWaitStrategy;
import org.testcontainers.utility.DockerImageName;

/**
 * A real {@code nats-server} with JetStream in a container of {@code spbgit/nats:latest} (built
 * offline by {@code docker/build-images.sh nats}; never pulled), which tests can stop, kill and
 * restart.
 *
 * <p>The container shares the host's network and listens on {@code 127.0.0.1:}{@link #port()}, so
 * the gateway, runners and job containers reach it exactly as they reach a nats-server process, and
 * a restart comes back on the same URL. Its directory is bind-mounted at the same path, holding the
 * JetStream store (kept across {@link #kill()} and {@link #restart()}) and {@code nats-server.log};
 * the server runs as the directory's owner, so the test can delete what it wrote.
 *
 * <p>Ryuk is disabled on these machines (its image would be pulled): {@link #close()} removes the
 * container, and a JVM shutdown hook removes any a test left running (each carries the label {@code
 * spb.test=nats}).
 *
 * <p>Threading: one test thread drives an instance; the shutdown hook only calls {@link #close()}.
 */
public final class NatsServer implements AutoCloseable {

  /** The image, overridable with {@code -Dspb.nats.image} (it must exist locally). */
  public static final String IMAGE = System.getProperty("spb.nats.image", "spbgit/nats:latest");

  private static final Set<NatsServer> RUNNING = ConcurrentHashMap.newKeySet();

  /** Once found, the image stays for the run: later starts skip the look-up. */
  private static volatile boolean imageFound;

  static {
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> List.copyOf(RUNNING).forEach(NatsServer::close), "spb-nats-containers"));
  }

  private final Path dir;
  private final int port;
  private final List<String> arguments;
  private volatile GenericContainer<?> container;

  private NatsServer(Path dir, int port, List<String> arguments) {
    this.dir = dir;
    this.port = port;
    this.arguments = arguments;
  }

  /** A single server on a free port, its store in {@code dir}; returns once it accepts clients. */
  public static NatsServer start(Path dir) throws Exception {
    Path store = Files.createDirectories(dir).toAbsolutePath();
    int port = freePort();
    return launch(
        store,
        port,
        List.of("-js", "-a", "127.0.0.1", "-p", String.valueOf(port), "-sd", store.toString()));
  }

  /**
   * A server run with {@code config}, a file inside {@code dir} whose paths lie inside {@code dir}
   * too, listening for clients on {@code 127.0.0.1:port} (a cluster node, say).
   */
  public static NatsServer startConfigured(Path dir, int port, Path config) throws Exception {
    Path home = dir.toAbsolutePath();
    return launch(home, port, List.of("-c", config.toAbsolutePath().toString()));
  }

  private static NatsServer launch(Path dir, int port, List<String> arguments) throws Exception {
    requireImage();
    List<String> command = new ArrayList<>(arguments);
    // Into a file rather than the container's output: it outlives the container, and appends.
    command.addAll(List.of("-l", dir.resolve("nats-server.log").toString()));
    NatsServer server = new NatsServer(dir, port, List.copyOf(command));
    server.restart();
    return server;
  }

  public String url() {
    return "nats://127.0.0.1:" + port;
  }

  public int port() {
    return port;
  }

  /** Where the server writes its log, across restarts. */
  public Path log() {
    return dir.resolve("nats-server.log");
  }

  /** Whether the server's container is running (it may have exited by itself). */
  public boolean isRunning() {
    return container != null && container.isRunning();
  }

  /**
   * Starts (again) in a new container on the same port and store, waiting until it accepts
   * connections.
   */
  public void restart() throws Exception {
    int uid = (Integer) Files.getAttribute(dir, "unix:uid");
    int gid = (Integer) Files.getAttribute(dir, "unix:gid");
    GenericContainer<?> next =
        new GenericContainer<>(DockerImageName.parse(IMAGE))
            .withImagePullPolicy(image -> false)
            .withNetworkMode("host")
            .withFileSystemBind(dir.toString(), dir.toString(), BindMode.READ_WRITE)
            .withCreateContainerCmdModifier(cmd -> cmd.withUser(uid + ":" + gid))
            .withLabel("spb.test", "nats")
            .withCommand(arguments.toArray(String[]::new))
            .waitingFor(new AcceptsConnections());
    container = next;
    RUNNING.add(this);
    try {
      next.start();
    } catch (RuntimeException e) {
      close();
      String log = Files.exists(log()) ? Files.readString(log()) : "(no log)";
      throw new IOException("nats-server did not start on port " + port + ":\n" + log, e);
    }
  }

  /**
   * Stops the server abruptly, like a crash ({@code docker kill}: SIGKILL), and removes its
   * container; the store stays for {@link #restart()}.
   */
  public void kill() {
    if (container != null && container.getContainerId() != null) {
      try {
        client().killContainerCmd(container.getContainerId()).exec();
      } catch (ConflictException e) {
        // Not running: it exited by itself, which is as dead as a kill makes it.
      }
    }
    remove();
  }

  /**
   * Removes the container, stopping the server with SIGKILL: nothing is read from a closed server,
   * and {@code docker rm -f} in one call is a tenth of a second faster than a graceful stop.
   */
  @Override
  public void close() {
    remove();
  }

  private void remove() {
    GenericContainer<?> gone = container;
    container = null;
    RUNNING.remove(this);
    if (gone != null && gone.getContainerId() != null) {
      try {
        client().removeContainerCmd(gone.getContainerId()).withForce(true).exec();
      } catch (NotFoundException e) {
        // Already removed (by the shutdown hook, or by hand).
      }
    }
  }

  /** Fails in CI, skips elsewhere, unless the engine answers and has the image. */
  private static void requireImage() {
    if (imageFound) {
      return;
    }
    try {
      client().inspectImageCmd(IMAGE).exec();
      imageFound = true;
    } catch (NotFoundException e) {
      Prerequisites.unmet(
          "the image " + IMAGE + " (docker/build-images.sh --if-missing nats; ./spbgit test does)");
    } catch (RuntimeException e) {
      Prerequisites.unmet("the Docker engine, for " + IMAGE + ": " + e.getMessage());
    }
  }

  private static DockerClient client() {
    return DockerClientFactory.instance().client();
  }

  public static int freePort() throws IOException {
    try (ServerSocket socket = new ServerSocket(0)) {
      return socket.getLocalPort();
    }
  }

  /**
   * Ready once the port accepts a connection, as a client would see it; fails if the server exits.
   */
  private final class AcceptsConnections extends AbstractWaitStrategy {

    AcceptsConnections() {
      withStartupTimeout(Duration.ofSeconds(15));
    }

    @Override
    protected void waitUntilReady() {
      long deadline = System.nanoTime() + startupTimeout.toNanos();
      while (System.nanoTime() < deadline) {
        try (Socket s = new Socket("127.0.0.1", port)) {
          return;
        } catch (IOException e) {
          if (!waitStrategyTarget.isRunning()) {
            throw new IllegalStateException("nats-server exited");
          }
          sleep(Duration.ofMillis(50));
        }
      }
      throw new IllegalStateException("not accepting connections after " + startupTimeout);
    }

    private void sleep(Duration duration) {
      try {
        Thread.sleep(duration.toMillis());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("interrupted", e);
      }
    }
  }
}
