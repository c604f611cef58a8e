package ai.spboucher.spbgit.runner.trust;

/** Why a job request must not run here; the message is the reason the runner logs and reports. */
public final class RequestRefused extends Exception {

  public RequestRefused(String reason) {
    super(reason);
  }
}
