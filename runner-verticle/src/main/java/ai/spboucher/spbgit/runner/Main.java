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

  public static void main(String[] args) {
    Map<String, String> env = System.getenv();
    Launcher launcher = new Launcher("spb-runner").logging(env);
    RunnerConfig config =
        launcher.configuration(env, e -> RunnerConfig.from(RunnerConfig.fromEnvironment(e)));
    // Epoll where Netty has it: its unix sockets can half-close, NIO's cannot (see JobSocket).
    Vertx vertx = Vertx.vertx(new VertxOptions().setPreferNativeTransport(true));
    launcher.serve(
        () ->
            vertx.deployVerticle(new RunnerVerticle(config, Clock.systemUTC())).toCompletionStage(),
        () -> vertx.close().toCompletionStage());
  }
}
