package ai.spboucher.spbgit.runner;

import ai.spboucher.spbgit.common.Launcher;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import java.time.Clock;
import java.util.Map;

/**
 * {@code java -jar spb-runner.jar}: a runner node, configured from {@code SPB_*} environment
 * variables.
 */
public final class Main {

  private Main() {}

  /**
   * The runner's Vert.x: epoll where Netty has it, because its unix sockets can half-close and
   * NIO's cannot (see JobSocket). Tests that run a runner in their JVM start it with these too.
   */
  static VertxOptions vertxOptions() {
    return new VertxOptions().setPreferNativeTransport(true);
  }

  public static void main(String[] args) {
    Map<String, String> env = System.getenv();
    Launcher launcher = new Launcher("spb-runner").logging(env);
    RunnerConfig config =
        launcher.configuration(env, e -> RunnerConfig.from(RunnerConfig.fromEnvironment(e)));
    Vertx vertx = Vertx.vertx(vertxOptions());
    launcher.serve(
        () ->
            vertx.deployVerticle(new RunnerVerticle(config, Clock.systemUTC())).toCompletionStage(),
        () -> vertx.close().toCompletionStage());
  }
}
