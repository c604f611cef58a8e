package ai.spboucher.spbgit.hooks;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Runs the real {@code git} CLI (and hook executables) for integration tests, isolated from the
 * developer's git configuration: {@code HOME} is a test directory, system config is off, inherited
 * {@code GIT_*} and {@code SPB_*} variables are dropped, and {@code JAVA} is the JVM running the
 * tests.
 */
final class TestGit {

  /** Exit code and combined stdout/stderr of a finished process. */
  record Result(int exitCode, String output) {
    Result assertSucceeded() {
      assertEquals(0, exitCode, output);
      return this;
    }
  }

  private final Path home;

  TestGit(Path home) {
    this.home = home;
  }

  Result git(Path cwd, String... args) throws IOException, InterruptedException {
    return git(cwd, Map.of(), args);
  }

  Result git(Path cwd, Map<String, String> env, String... args)
      throws IOException, InterruptedException {
    List<String> commandLine = new ArrayList<>();
    commandLine.add("git");
    commandLine.addAll(Arrays.asList(args));
    return run(cwd, env, "", commandLine.toArray(String[]::new));
  }

  /** {@code git} as the committer "Test <test@example.invalid>" (for commit and tag). */
  Result asTester(Path cwd, String... args) throws IOException, InterruptedException {
    List<String> all =
        new ArrayList<>(List.of("-c", "user.name=Test", "-c", "user.email=test@example.invalid"));
    all.addAll(Arrays.asList(args));
    return git(cwd, all.toArray(String[]::new));
  }

  /** A new repository {@code work} (run from {@code cwd}) on main, with one empty commit. */
  void initWithEmptyCommit(Path cwd, Path work) throws IOException, InterruptedException {
    git(cwd, "init", "-q", "-b", "main", work.toString()).assertSucceeded();
    asTester(work, "commit", "-q", "--allow-empty", "-m", "initial").assertSucceeded();
  }

  Result run(Path cwd, Map<String, String> env, String stdin, String... commandLine)
      throws IOException, InterruptedException {
    ProcessBuilder builder =
        new ProcessBuilder(commandLine).directory(cwd.toFile()).redirectErrorStream(true);
    Map<String, String> environment = builder.environment();
    environment.keySet().removeIf(name -> name.startsWith("GIT_") || name.startsWith("SPB_"));
    environment.remove("XDG_CONFIG_HOME");
    environment.put("HOME", home.toString());
    environment.put("GIT_CONFIG_NOSYSTEM", "1");
    environment.put("JAVA", Path.of(System.getProperty("java.home"), "bin", "java").toString());
    environment.putAll(env);
    Process process = builder.start();
    try (var in = process.getOutputStream()) {
      in.write(stdin.getBytes(StandardCharsets.UTF_8));
    }
    String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (!process.waitFor(60, TimeUnit.SECONDS)) {
      process.destroyForcibly();
      throw new IllegalStateException(String.join(" ", commandLine) + " did not finish: " + output);
    }
    return new Result(process.exitValue(), output);
  }
}
