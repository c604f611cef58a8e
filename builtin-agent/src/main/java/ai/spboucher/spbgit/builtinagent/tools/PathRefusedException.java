package ai.spboucher.spbgit.builtinagent.tools;

/**
 * A path the tools must not touch: outside the checkout, or inside {@code .git/} or {@code .spb/}.
 */
public final class PathRefusedException extends Exception {
  private static final long serialVersionUID = 1L;

  public PathRefusedException(String message) {
    super(message);
  }
}
