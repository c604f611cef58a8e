package ai.spboucher.spbgit.gateway.review;

import java.time.Duration;
import org.eclipse.jgit.lib.ProgressMonitor;

/**
 * The time one diff computation has left, and whether anyone still waits for it. The computing code
 * calls {@link #check()} often enough (every few thousand line comparisons) that running out of
 * either stops it soon.
 *
 * <p>Threading: {@link #start()} and {@link #check()} on the computing thread; {@link #cancel()}
 * and {@link #cancelled()} from any thread.
 */
final class DiffAllowance {

  private final Duration time;
  private long deadline;
  private volatile boolean cancelled;

  DiffAllowance(Duration time) {
    this.time = time;
  }

  /** Starts the clock: time spent waiting for a worker thread is not the diff's to pay. */
  void start() {
    deadline = System.nanoTime() + time.toNanos();
  }

  Duration time() {
    return time;
  }

  /** Stops the computation at its next check: nobody will read its answer. */
  void cancel() {
    cancelled = true;
  }

  boolean cancelled() {
    return cancelled;
  }

  boolean outOfTime() {
    return System.nanoTime() - deadline > 0;
  }

  /**
   * Throws {@link DiffCancelledException} once cancelled, {@link OutOfTime} once the time is spent.
   */
  void check() {
    if (cancelled) {
      throw new DiffCancelledException();
    }
    if (outOfTime()) {
      throw new OutOfTime();
    }
  }

  /**
   * For JGit's rename detection, which polls {@link ProgressMonitor#isCancelled()} and then gives
   * up silently.
   */
  ProgressMonitor asProgressMonitor() {
    return new ProgressMonitor() {
      @Override
      public void start(int totalTasks) {}

      @Override
      public void beginTask(String title, int totalWork) {}

      @Override
      public void update(int completed) {}

      @Override
      public void endTask() {}

      @Override
      public boolean isCancelled() {
        return cancelled || outOfTime();
      }

      @Override
      public void showDuration(boolean enabled) {}
    };
  }

  /**
   * The diff's time is spent; thrown from deep inside a diff algorithm, so unchecked and without a
   * stack.
   */
  static final class OutOfTime extends RuntimeException {
    OutOfTime() {
      super("the diff ran out of time", null, false, false);
    }
  }
}
