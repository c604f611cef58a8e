package ai.spboucher.spbgit.testsupport;

import static org.junit.jupiter.api.Assertions.fail;

import org.junit.jupiter.api.Assumptions;

/**
 * What a test needs from the machine (Docker, an image, root, a browser, a tool). In CI ({@code
 * CI=true}), where {@code .ci/run} installs everything, a missing one fails the test; on a
 * developer's machine it skips it. The one place that decides, so no test can skip silently in CI.
 */
public final class Prerequisites {

  private Prerequisites() {}

  /** Whether the tests run in CI, where every prerequisite must be there. */
  public static boolean inCi() {
    return "true".equals(System.getenv("CI"));
  }

  /** Fails in CI, skips elsewhere: {@code why} names what is missing and how to get it. */
  public static void unmet(String why) {
    if (inCi()) {
      fail("required in CI: " + why);
    }
    Assumptions.abort(why);
  }

  /** {@link #unmet} unless {@code met}. */
  public static void require(boolean met, String why) {
    if (!met) {
      unmet(why);
    }
  }
}
