package ai.spboucher.spbgit.benchmarks.system;

import ai.spboucher.spbgit.testsupport.WallClock;
import io.vertx.core.json.JsonObject;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The Docker engine's own record of when each container of one runner was created, started, died
 * and was destroyed, read from {@code docker events} (stamped by the engine in nanoseconds of the
 * wall clock, the clock {@link WallClock} reads), so a phase's start is the engine's, not a log
 * line's arrival.
 *
 * <p>Threading: one reader thread fills the map; {@link #await} may be called from any thread.
 */
final class ContainerEvents implements AutoCloseable {

  private final Process process;
  private final Map<String, Long> micros = new ConcurrentHashMap<>();
  private final Thread reader;

  private ContainerEvents(Process process) {
    this.process = process;
    this.reader = new Thread(this::read, "docker-events");
    reader.setDaemon(true);
    reader.start();
  }

  /** Follows the events of the containers labelled {@code spb.runner=<runnerId>}. */
  static ContainerEvents follow(String runnerId) throws IOException {
    Process p =
        new ProcessBuilder(
                "docker",
                "events",
                "--format",
                "{{json .}}",
                "--filter",
                "type=container",
                "--filter",
                "label=spb.runner=" + runnerId)
            .redirectError(ProcessBuilder.Redirect.DISCARD)
            .start();
    return new ContainerEvents(p);
  }

  private void read() {
    try (BufferedReader lines =
        new BufferedReader(
            new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
      for (String line = lines.readLine(); line != null; line = lines.readLine()) {
        JsonObject event = new JsonObject(line);
        String action = event.getString("Action", event.getString("status", ""));
        String name = event.getJsonObject("Actor").getJsonObject("Attributes").getString("name");
        micros.putIfAbsent(name + " " + action, event.getLong("timeNano") / 1000);
      }
    } catch (IOException | RuntimeException e) {
      if (process.isAlive()) {
        System.err.println("docker events: " + e);
      }
    }
  }

  /**
   * When the engine reported {@code action} (create, start, die, destroy) of the container named
   * {@code name}, in wall-clock µs; waits up to {@code timeout} for it (events trail the API
   * calls).
   */
  long await(String name, String action, Duration timeout) throws InterruptedException {
    long until = System.nanoTime() + timeout.toNanos();
    Long at;
    while ((at = micros.get(name + " " + action)) == null) {
      if (System.nanoTime() > until) {
        throw new IllegalStateException("no '" + action + "' event of container " + name);
      }
      Thread.sleep(10);
    }
    return at;
  }

  @Override
  public void close() {
    process.destroy();
  }
}
