package ai.spboucher.spbgit.runner;

import ai.spboucher.spbgit.testsupport.GatewayProcess;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.TestExecutionExceptionHandler;

/**
 * When a test that runs a {@link GatewayProcess} fails, or hits its timeout, this adds to the
 * failure what the gateway printed last and, while it still runs, its threads ({@code jcmd
 * Thread.print}): a failure in CI is often all that is kept, and a hang cannot be understood
 * afterwards without them. The whole log stays in the test's log directory.
 */
final class GatewayDiagnostics implements TestExecutionExceptionHandler {

  private static final int LOG_LINES = 60;

  /** A test class whose gateway process this extension may inspect. */
  interface RunsGateway {
    GatewayProcess gateway();
  }

  @Override
  public void handleTestExecutionException(ExtensionContext context, Throwable failure)
      throws Throwable {
    if (context.getTestInstance().orElse(null) instanceof RunsGateway test
        && test.gateway() != null) {
      failure.addSuppressed(new AssertionError(describe(test.gateway())));
    }
    throw failure;
  }

  private static String describe(GatewayProcess gateway) {
    StringBuilder out =
        new StringBuilder(
            "the gateway process, "
                + (gateway.isAlive() ? "running" : "not running")
                + "; the last lines it printed:\n");
    try {
      List<String> lines = gateway.log().lines().toList();
      lines
          .subList(Math.max(0, lines.size() - LOG_LINES), lines.size())
          .forEach(l -> out.append(l).append('\n'));
    } catch (IOException e) {
      out.append("(cannot read its log: ").append(e.getMessage()).append(")\n");
    }
    if (gateway.isAlive()) {
      try {
        String threads = gateway.jcmd("Thread.print");
        Path dump =
            gateway.logDir().resolve("gateway-threads-" + System.currentTimeMillis() + ".txt");
        Files.writeString(dump, threads);
        out.append("its threads (also in ")
            .append(dump.toAbsolutePath())
            .append("):\n")
            .append(threads);
      } catch (Exception e) {
        out.append("(cannot dump its threads: ").append(e.getMessage()).append(")\n");
      }
    }
    return out.toString();
  }
}
