package ai.spboucher.spbgit.runner;

import ai.spboucher.spbgit.common.EcKeys;
import ai.spboucher.spbgit.testsupport.JvmProcess;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * A runner as its own operating-system process, started from the packaged {@code
 * target/spb-runner.jar} (failsafe runs in the module directory, after {@code package}), which a
 * test can kill like a crash and start again with the same settings. Each start writes its own log
 * file next to the others.
 */
public final class RunnerProcess implements AutoCloseable {

  static final Path JAR = Path.of("target", "spb-runner.jar");
  private static final Duration READY_TIMEOUT = Duration.ofSeconds(60);

  /**
   * A small heap and the client compiler: this is one of several JVMs sharing two cores in the
   * tests.
   */
  private static final List<String> JVM =
      List.of("-Xmx192m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1");

  private final Map<String, String> env;
  private final Path logDir;
  private JvmProcess process;
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
    String id = env.get("SPB_RUNNER_ID");
    process =
        JvmProcess.start(
            "the runner",
            JAR,
            JVM,
            env,
            logDir.resolve("runner-" + id + "-" + (++starts) + ".log"),
            READY_TIMEOUT,
            log -> log.contains("runner " + id + " ready"));
  }

  /** SIGKILL, like a crash or the OOM killer: no shutdown hook runs. */
  public void kill() throws InterruptedException {
    process.kill();
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
    return process == null ? "" : process.log();
  }

  /** SIGTERM, so the runner stops its jobs and closes; SIGKILL if it has not exited after 60 s. */
  @Override
  public void close() throws InterruptedException {
    if (process != null) {
      process.stop(Duration.ofSeconds(60));
    }
  }
}
