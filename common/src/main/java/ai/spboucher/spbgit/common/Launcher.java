package ai.spboucher.spbgit.common;

import java.util.Map;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * What the gateway's and the runner's {@code main} share: the log format from {@code
 * SPB_LOG_FORMAT}, exit code 2 with one line on a bad configuration, exit code 1 when the process
 * cannot start, and a shutdown hook that stops it cleanly within 30 seconds. It knows nothing of
 * Vert.x: the caller hands it the start and stop as futures.
 *
 * <p>Threading: {@link #serve} returns at once; the start's failure callback and the shutdown hook
 * run on other threads, so exiting never waits on the thread that would have to finish first.
 */
public final class Launcher {

  /** The exit code of a bad configuration or command line. */
  public static final int USAGE = 2;

  private final String name;
  private final AtomicBoolean shuttingDown = new AtomicBoolean();

  /** {@code name} prefixes every line this writes to standard error (e.g. {@code spb-runner}). */
  public Launcher(String name) {
    this.name = name;
  }

  /** Installs the log format {@code env} asks for ({@code SPB_LOG_FORMAT}): call it first. */
  public Launcher logging(Map<String, String> env) {
    LogFormat.install(LogFormat.Kind.of(env.get("SPB_LOG_FORMAT")));
    return this;
  }

  /**
   * The configuration {@code read} makes of {@code env}, or, when it refuses it, exit {@link
   * #USAGE}.
   */
  public <C> C configuration(Map<String, String> env, Function<Map<String, String>, C> read) {
    try {
      return read.apply(env);
    } catch (IllegalArgumentException e) {
      throw refuse(e.getMessage());
    }
  }

  /**
   * Writes {@code name: message} and exits {@link #USAGE}; returns only in the type system, for
   * {@code throw}.
   */
  public IllegalStateException refuse(String message) {
    System.err.println(name + ": " + message);
    System.exit(USAGE);
    return new IllegalStateException(message);
  }

  /**
   * Registers the shutdown hook that {@code stop}s the process, then {@code start}s it; exits 1 if
   * the start fails other than by a shutdown under way.
   */
  public void serve(
      Supplier<? extends CompletionStage<?>> start, Supplier<? extends CompletionStage<?>> stop) {
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  shuttingDown.set(true);
                  try {
                    stop.get().toCompletableFuture().get(30, TimeUnit.SECONDS);
                  } catch (Exception e) {
                    System.err.println(name + ": stopped without a clean shutdown: " + e);
                  }
                },
                name + "-shutdown"));
    start
        .get()
        .whenComplete(
            (started, e) -> {
              if (e != null && !shuttingDown.get()) {
                System.err.println(name + ": cannot start: " + e.getMessage());
                // Not on the thread that failed (an event loop): exit runs the shutdown hook, which
                // waits for it.
                new Thread(() -> System.exit(1), name + "-exit").start();
              }
            });
  }
}
