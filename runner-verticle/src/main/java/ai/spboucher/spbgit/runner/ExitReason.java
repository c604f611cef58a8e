package ai.spboucher.spbgit.runner;

/**
 * Why a job ended, decided from what the runner observed itself (its timer, the cancel request, the kernel's
 * OOM flag, the work volume, the exit code), never from anything the container printed.
 */
public final class ExitReason {

  public static final String OK = "ok";
  public static final String OOM = "oom";
  public static final String TIMEOUT = "timeout";
  public static final String DISK_LIMIT = "disk_limit";
  public static final String CANCELLED = "cancelled";
  public static final String RUNNER_LOST = "runner_lost";
  public static final String RUNNER_ERROR = "runner_error";

  private ExitReason() {
  }

  /** What the runner saw when the container stopped. */
  public record Observation(boolean cancelled, boolean timedOut, boolean oomKilled, boolean workVolumeFull,
                            long exitCode) {
  }

  /**
   * The first applicable reason, in order: the runner's own decisions (cancel, timeout), then breaches the
   * kernel reports (oom, a full work volume with a failing exit), then the exit code.
   */
  public static String decide(Observation o) {
    if (o.cancelled()) {
      return CANCELLED;
    }
    if (o.timedOut()) {
      return TIMEOUT;
    }
    if (o.oomKilled()) {
      return OOM;
    }
    if (o.exitCode() != 0 && o.workVolumeFull()) {
      return DISK_LIMIT;
    }
    return o.exitCode() == 0 ? OK : "exit_code:" + o.exitCode();
  }
}
