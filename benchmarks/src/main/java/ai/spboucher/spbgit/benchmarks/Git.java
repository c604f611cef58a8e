package ai.spboucher.spbgit.benchmarks;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** The real {@code git} CLI with an isolated HOME, no system config and no credential prompts. */
final class Git {

  private final Path home;

  Git(Path home) {
    this.home = home;
  }

  /** Runs git in {@code dir} and returns its output; fails with that output when git fails. */
  String run(Path dir, String... args) throws IOException, InterruptedException {
    List<String> command = new ArrayList<>();
    command.add("git");
    command.addAll(List.of(args));
    ProcessBuilder pb =
        new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true);
    pb.environment().put("HOME", home.toString());
    pb.environment().put("GIT_CONFIG_NOSYSTEM", "1");
    pb.environment().put("GIT_TERMINAL_PROMPT", "0");
    pb.environment().put("GIT_ASKPASS", "/bin/false");
    pb.environment().put("GIT_AUTHOR_NAME", "Bench");
    pb.environment().put("GIT_AUTHOR_EMAIL", "bench@example.invalid");
    pb.environment().put("GIT_COMMITTER_NAME", "Bench");
    pb.environment().put("GIT_COMMITTER_EMAIL", "bench@example.invalid");
    Process p = pb.start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (!p.waitFor(120, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      throw new IOException("git " + args[0] + " timed out");
    }
    if (p.exitValue() != 0) {
      // git strips credentials from the URLs it prints, so the output is safe to show.
      throw new IOException("git " + args[0] + " failed (" + p.exitValue() + "):\n" + out);
    }
    return out;
  }
}
