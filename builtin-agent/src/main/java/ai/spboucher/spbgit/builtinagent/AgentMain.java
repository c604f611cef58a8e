package ai.spboucher.spbgit.builtinagent;

import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

/**
 * The llm-mode agent inside the sandbox: {@code java -jar /opt/spb/agent.jar}, started by the
 * entrypoint in the checkout. Configuration comes from the environment (see {@link AgentConfig});
 * the exit code is one of {@link AgentExit}.
 */
public final class AgentMain {
  private AgentMain() {}

  public static void main(String[] args) {
    Progress progress =
        new Progress(
            new PrintStream(
                new FileOutputStream(FileDescriptor.out), true, StandardCharsets.UTF_8));
    AgentConfig config;
    try {
      config = AgentConfig.from(System.getenv());
    } catch (IllegalArgumentException e) {
      progress.line("configuration error: " + e.getMessage());
      progress.result(0, false, "configuration error: " + e.getMessage(), null);
      System.exit(AgentExit.CONFIGURATION.code());
      return;
    }
    int code;
    try {
      code = new Agent(config, progress).run();
    } catch (IOException e) {
      String message = "cannot use the checkout " + config.root() + ": " + e.getMessage();
      progress.line(message);
      progress.result(0, false, message, config.resultFile());
      code = AgentExit.CONFIGURATION.code();
    }
    System.exit(code);
  }
}
