package ai.spboucher.spbgit.runner;

import ai.spboucher.spbgit.testsupport.StackLaunchers;
import io.vertx.core.Vertx;
import java.time.Clock;
import java.util.Map;

/**
 * A runner deployed in this JVM as {@code Main} deploys it, on a Vert.x of its own; closing it
 * closes that Vert.x (its running jobs end runner_lost). {@link Launcher} is how a {@code Stack}
 * starts one.
 */
public record InJvmRunner(Vertx vertx, RunnerConfig config) implements AutoCloseable {

  /** Deploys a runner configured by {@code env} ({@code SPB_*}, as the environment gives them). */
  public static InJvmRunner start(Map<String, String> env) {
    RunnerConfig config = RunnerConfig.from(RunnerConfig.fromEnvironment(env));
    // As Main starts it: on NIO the job sockets could not half-close, unlike the runner's.
    Vertx vertx = Vertx.vertx(Main.vertxOptions());
    vertx.deployVerticle(new RunnerVerticle(config, Clock.systemUTC())).await();
    return new InJvmRunner(vertx, config);
  }

  @Override
  public void close() {
    vertx.close().await();
  }

  /** How a {@code Stack} starts a runner: {@link InJvmRunner#start}. */
  public static final class Launcher implements StackLaunchers.Runner {
    @Override
    public AutoCloseable start(Map<String, String> env) {
      return InJvmRunner.start(env);
    }
  }
}
