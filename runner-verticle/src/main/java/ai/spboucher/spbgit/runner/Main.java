package ai.spboucher.spbgit.runner;

import io.vertx.core.Vertx;
import java.time.Clock;

/** {@code java -jar spb-runner.jar}: a runner node, configured from {@code SPB_*} environment variables. */
public final class Main {

  private static final java.util.concurrent.atomic.AtomicBoolean SHUTTING_DOWN =
      new java.util.concurrent.atomic.AtomicBoolean();

  private Main() {
  }

  public static void main(String[] args) {
    ai.spboucher.spbgit.common.LogFormat.install(System.getenv("SPB_LOG_FORMAT"));
    RunnerConfig config;
    try {
      config = RunnerConfig.fromEnvironment(System.getenv());
    } catch (IllegalArgumentException e) {
      System.err.println("spb-runner: " + e.getMessage());
      System.exit(2);
      return;
    }
    // Epoll where Netty has it: its unix sockets can half-close, NIO's cannot (see JobSocket).
    Vertx vertx = Vertx.vertx(new io.vertx.core.VertxOptions().setPreferNativeTransport(true));
    vertx.deployVerticle(new RunnerVerticle(config, Clock.systemUTC()))
        .onFailure(e -> {
          if (!SHUTTING_DOWN.get()) {
            System.err.println("spb-runner: cannot start: " + e.getMessage());
            // Not on the event loop: exit runs the shutdown hook, which waits for this very loop.
            new Thread(() -> System.exit(1), "spb-runner-exit").start();
          }
        });
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      SHUTTING_DOWN.set(true);
      try {
        vertx.close().toCompletionStage().toCompletableFuture().get(30, java.util.concurrent.TimeUnit.SECONDS);
      } catch (Exception e) {
        System.err.println("spb-runner: stopped without a clean shutdown: " + e);
      }
    }));
  }
}
