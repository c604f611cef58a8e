package ai.spboucher.spbgit.runner.egress;

import java.time.Duration;
import java.time.Instant;
import java.util.function.Consumer;

/**
 * What an exchange (the egress proxy's, the git relay's) learns about one attempt until it becomes
 * an {@link EgressRecord}, once: when it started, whether it was let through, and why it failed.
 *
 * <p>Threading: used on the event loop of the job's connection only.
 */
public final class EgressAttempt {

  private final String method;
  private final Instant startedAt = Instant.now();
  private final long startNanos = System.nanoTime();
  private boolean allowed;
  private String failure;
  private boolean recorded;

  public EgressAttempt(String method) {
    this.method = method;
  }

  /** The attempt was let through to its target. */
  public void allow() {
    allowed = true;
  }

  /** Why the attempt did not reach its target. */
  public void fail(String why) {
    failure = why;
  }

  public String failure() {
    return failure;
  }

  /** Hands the record of the attempt to {@code to} the first time; later calls do nothing. */
  public void record(
      String host, int port, long bytesUp, long bytesDown, Consumer<? super EgressRecord> to) {
    if (recorded) {
      return;
    }
    recorded = true;
    to.accept(
        new EgressRecord(
            startedAt,
            method,
            host,
            port,
            allowed,
            bytesUp,
            bytesDown,
            Duration.ofNanos(System.nanoTime() - startNanos),
            failure));
  }
}
