package ai.spboucher.spbgit.runner;

/** The container was ended by the engine, not by the job's processes or the runner. */
final class StoppedFromOutside extends Exception {

  private static final long serialVersionUID = 1L;

  StoppedFromOutside(String message) {
    super(message);
  }
}
