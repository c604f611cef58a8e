package ai.spboucher.spbgit.runner;

import ai.spboucher.spbgit.common.EcKeys;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A runner as its own operating-system process, started from the packaged {@code
 * target/spb-runner.jar} (failsafe runs in the module directory, after {@code package}), which a
 * test can kill like a crash and start again with the same settings. Each start writes its own log
 * file next to the others.
 */
public final class RunnerProcess implements AutoCloseable {

  static final Path JAR = Path.of("target", "spb-runner.jar");
  private static final long READY_TIMEOUT_MS = 60_000;

  private final Map<String, String> env;
  private final Path logDir;
  private Process process;
  private Path logFile;
  private int starts;

  private RunnerProcess(Map<String, String> env, Path logDir) {
    this.env = Map.copyOf(env);
    this.logDir = logDir;
  }

  /**
   * Starts {@code java -jar spb-runner.jar} with {@code env} and waits until it says it is ready.
   */
  public static RunnerProcess start(Map<String, String> env, Path logDir) throws Exception {
    if (!Files.isRegularFile(JAR)) {
      throw new IllegalStateException(
          JAR.toAbsolutePath() + " is missing: run the tests with mvn verify");
    }
    RunnerProcess runner = new RunnerProcess(env, Files.createDirectories(logDir));
    runner.restart();
    return runner;
  }

  /** Starts the process (again), with the same environment, and waits for its "ready" log line. */
  public void restart() throws Exception {
    if (process != null && process.isAlive()) {
      throw new IllegalStateException("the runner process is still running");
    }
    logFile = logDir.resolve("runner-" + env.get("SPB_RUNNER_ID") + "-" + (++starts) + ".log");
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    // A small heap and the client compiler: this is one of several JVMs sharing two cores in the
    // tests.
    ProcessBuilder builder =
        new ProcessBuilder(
                java,
                "-Xmx192m",
                "-XX:+UseSerialGC",
                "-XX:TieredStopAtLevel=1",
                "-jar",
                JAR.toString())
            .redirectErrorStream(true)
            .redirectOutput(logFile.toFile());
    builder.environment().putAll(env);
    process = builder.start();
    String ready = "runner " + env.get("SPB_RUNNER_ID") + " ready";
    long deadline = System.currentTimeMillis() + READY_TIMEOUT_MS;
    while (!log().contains(ready)) {
      if (!process.isAlive()) {
        throw new IOException("the runner exited with " + process.exitValue() + ":\n" + log());
      }
      if (System.currentTimeMillis() > deadline) {
        throw new IOException(
            "the runner was not ready within " + READY_TIMEOUT_MS + " ms:\n" + log());
      }
      Thread.sleep(100);
    }
  }

  /** SIGKILL, like a crash or the OOM killer: no shutdown hook runs. */
  public void kill() throws InterruptedException {
    process.destroyForcibly();
    if (!process.waitFor(10, TimeUnit.SECONDS)) {
      throw new IllegalStateException("the runner did not die from SIGKILL");
    }
  }

  /**
   * The public half of the runner's key, which the gateway must be given ({@code
   * GatewayProcess.registerRunner}) before it seals job tokens to this runner: beside {@code
   * SPB_RUNNER_KEY}, by default in {@code SPB_RUNNER_WORK_DIR}. It exists once the runner started.
   */
  public Path publicKey() {
    String key = env.get("SPB_RUNNER_KEY");
    return key != null
        ? EcKeys.publicFileBeside(Path.of(key))
        : Path.of(env.get("SPB_RUNNER_WORK_DIR"), "runner-key.pub.pem");
  }

  public boolean isAlive() {
    return process != null && process.isAlive();
  }

  public long pid() {
    return process.pid();
  }

  /** What the current (or last) start printed. */
  public String log() throws IOException {
    return logFile == null || !Files.exists(logFile) ? "" : Files.readString(logFile);
  }

  /** SIGTERM, so the runner stops its jobs and closes; SIGKILL if it has not exited after 60 s. */
  @Override
  public void close() throws InterruptedException {
    if (process != null && process.isAlive()) {
      process.destroy();
      if (!process.waitFor(60, TimeUnit.SECONDS)) {
        kill();
      }
    }
  }
}
