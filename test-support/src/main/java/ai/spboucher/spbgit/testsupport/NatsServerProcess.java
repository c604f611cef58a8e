package ai.spboucher.spbgit.testsupport;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * A real {@code nats-server -js} on a free port with its own store, which tests can stop, kill and
 * restart.
 */
public final class NatsServerProcess implements AutoCloseable {

  private final Path storeDir;
  private final int port;
  private Process process;

  private NatsServerProcess(Path storeDir, int port) {
    this.storeDir = storeDir;
    this.port = port;
  }

  public static NatsServerProcess start(Path dir) throws Exception {
    NatsServerProcess server = new NatsServerProcess(Files.createDirectories(dir), freePort());
    server.restart();
    return server;
  }

  public String url() {
    return "nats://127.0.0.1:" + port;
  }

  public int port() {
    return port;
  }

  /** Starts (again) on the same port and store, waiting until it accepts connections. */
  public void restart() throws Exception {
    process =
        new ProcessBuilder(
                "nats-server",
                "-js",
                "-a",
                "127.0.0.1",
                "-p",
                String.valueOf(port),
                "-sd",
                storeDir.toString())
            .redirectErrorStream(true)
            .redirectOutput(storeDir.resolve("nats-server.log").toFile())
            .start();
    long deadline = System.currentTimeMillis() + 15_000;
    while (System.currentTimeMillis() < deadline) {
      try (Socket s = new Socket("127.0.0.1", port)) {
        return;
      } catch (IOException e) {
        if (!process.isAlive()) {
          throw new IOException(
              "nats-server exited: " + Files.readString(storeDir.resolve("nats-server.log")));
        }
        Thread.sleep(50);
      }
    }
    throw new IOException("nats-server did not start on port " + port);
  }

  /** Stops the server abruptly, like a crash. */
  public void kill() throws InterruptedException {
    process.destroyForcibly();
    process.waitFor(10, TimeUnit.SECONDS);
  }

  @Override
  public void close() throws InterruptedException {
    if (process != null) {
      process.destroy();
      if (!process.waitFor(10, TimeUnit.SECONDS)) {
        kill();
      }
    }
  }

  /** Whether {@code nats-server} is on the {@code PATH}, for callers that can do without it. */
  public static boolean installed() {
    for (String dir : System.getenv().getOrDefault("PATH", "").split(":")) {
      if (!dir.isEmpty() && Files.isExecutable(Path.of(dir, "nats-server"))) {
        return true;
      }
    }
    return false;
  }

  public static int freePort() throws IOException {
    try (ServerSocket socket = new ServerSocket(0)) {
      return socket.getLocalPort();
    }
  }
}
