package ai.spboucher.spbgit.testsupport;

import org.junit.platform.launcher.LauncherSession;
import org.junit.platform.launcher.LauncherSessionListener;
import org.testcontainers.DockerClientFactory;

/**
 * Connects Testcontainers to the Docker engine on a background thread as soon as an
 * integration-test JVM starts ({@code -Dspb.testcontainers.warmUp=true}, set by the root pom's
 * failsafe), while JUnit discovers the tests: the first connection loads docker-java and asks the
 * engine for its version, 2 to 5 s that the first {@link NatsServer} would otherwise wait for.
 *
 * <p>Threading: one daemon thread per JVM; {@link DockerClientFactory#client()} is synchronized, so
 * a {@link NatsServer} starting meanwhile waits for the same connection instead of opening another.
 */
public final class TestcontainersWarmUp implements LauncherSessionListener {

  @Override
  public void launcherSessionOpened(LauncherSession session) {
    // Only where tests start containers (failsafe's JVMs): a unit-test JVM would connect for
    // nothing.
    if (!Boolean.getBoolean("spb.testcontainers.warmUp")) {
      return;
    }
    Thread warmUp = new Thread(TestcontainersWarmUp::connect, "spb-testcontainers-warm-up");
    warmUp.setDaemon(true);
    warmUp.start();
  }

  private static void connect() {
    try {
      DockerClientFactory.instance().client();
    } catch (RuntimeException | LinkageError e) {
      // No engine, or no Testcontainers on this path (the benchmarks): the first NatsServer says
      // so.
    }
  }
}
