package ai.spboucher.spbgit.testsupport;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/**
 * One start of a packaged jar in a JVM of its own, its output (standard error too) in a log file:
 * how the tests start the product as operating-system processes ({@link GatewayProcess}, the runner
 * tests' {@code RunnerProcess}), to kill them like a crash. {@link #start} returns once the log
 * shows the process ready.
 *
 * <p>Threading: one test thread drives an instance.
 */
public final class JvmProcess {

  private final String name;
  private final Process process;
  private final Path logFile;

  private JvmProcess(String name, Process process, Path logFile) {
    this.name = name;
    this.process = process;
    this.logFile = logFile;
  }

  /**
   * Runs {@code java <jvmOptions> -jar <jar>} with {@code env} added to this JVM's environment,
   * writing to {@code logFile}, and waits until {@code ready} holds for what it printed. Throws,
   * quoting the log, if it exits first or is not ready within {@code timeout} ({@code name} says
   * what it is: "the gateway").
   */
  public static JvmProcess start(
      String name,
      Path jar,
      List<String> jvmOptions,
      Map<String, String> env,
      Path logFile,
      Duration timeout,
      Predicate<String> ready)
      throws Exception {
    List<String> command =
        new ArrayList<>(
            List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString()));
    command.addAll(jvmOptions);
    command.addAll(List.of("-jar", jar.toString()));
    ProcessBuilder builder =
        new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(logFile.toFile());
    builder.environment().putAll(env);
    JvmProcess started = new JvmProcess(name, builder.start(), logFile);
    try {
      started.awaitReady(timeout, ready);
    } catch (Exception | Error e) {
      // The caller never gets hold of a process that did not come up: none outlives the test.
      started.kill();
      throw e;
    }
    return started;
  }

  private void awaitReady(Duration timeout, Predicate<String> ready) throws Exception {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (!ready.test(log())) {
      if (!process.isAlive()) {
        throw new IOException(name + " exited with " + process.exitValue() + ":\n" + log());
      }
      if (System.nanoTime() > deadline) {
        throw new IOException(
            name + " was not ready within " + timeout.toMillis() + " ms:\n" + log());
      }
      Thread.sleep(100);
    }
  }

  /** What it printed so far. */
  public String log() throws IOException {
    return Files.exists(logFile) ? Files.readString(logFile) : "";
  }

  /** SIGKILL, like a crash or the OOM killer: no shutdown hook runs. */
  public void kill() throws InterruptedException {
    process.destroyForcibly();
    if (!process.waitFor(10, TimeUnit.SECONDS)) {
      throw new IllegalStateException(name + " did not die from SIGKILL");
    }
  }

  /**
   * SIGTERM, so it shuts down as an operator's stop does; SIGKILL if it is not gone in {@code
   * grace}.
   */
  public void stop(Duration grace) throws InterruptedException {
    if (process.isAlive()) {
      process.destroy();
      if (!process.waitFor(grace.toMillis(), TimeUnit.MILLISECONDS)) {
        kill();
      }
    }
  }

  public boolean isAlive() {
    return process.isAlive();
  }

  public long pid() {
    return process.pid();
  }

  /** CPU time the process has used so far, all its threads together. */
  public double cpuMillis() {
    return process.info().totalCpuDuration().orElseThrow().toNanos() / 1e6;
  }
}
