package ai.spboucher.spbgit.testsupport;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/** Runs the real {@code git} CLI with an isolated HOME and no credential prompts. */
public final class GitCli {

  public record Result(int exit, String output) {
    public boolean ok() {
      return exit == 0;
    }
  }

  private final Path home;

  public GitCli(Path home) {
    this.home = home;
  }

  public Result run(Path dir, String... args) throws IOException, InterruptedException {
    return run(dir, Map.of(), args);
  }

  public Result run(Path dir, Map<String, String> env, String... args)
      throws IOException, InterruptedException {
    List<String> command = new ArrayList<>();
    command.add("git");
    command.addAll(List.of(args));
    ProcessBuilder pb =
        new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true);
    pb.environment().put("HOME", home.toString());
    pb.environment().put("GIT_CONFIG_NOSYSTEM", "1");
    pb.environment().put("GIT_TERMINAL_PROMPT", "0");
    pb.environment().put("GIT_ASKPASS", "/bin/false");
    pb.environment().put("GIT_AUTHOR_NAME", "Test");
    pb.environment().put("GIT_AUTHOR_EMAIL", "test@example.invalid");
    pb.environment().put("GIT_COMMITTER_NAME", "Test");
    pb.environment().put("GIT_COMMITTER_EMAIL", "test@example.invalid");
    pb.environment().putAll(env);
    Process p = pb.start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (!p.waitFor(120, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      throw new IOException("git " + String.join(" ", args) + " timed out");
    }
    return new Result(p.exitValue(), out);
  }

  public Result ok(Path dir, String... args) throws IOException, InterruptedException {
    Result r = run(dir, args);
    if (!r.ok()) {
      throw new AssertionError(
          "git " + String.join(" ", args) + " failed (" + r.exit() + "):\n" + r.output());
    }
    return r;
  }

  /** A fresh work tree with one commit on {@code main}. */
  public Path workTree(Path parent, String name) throws IOException, InterruptedException {
    Path dir = Files.createDirectories(parent.resolve(name));
    ok(dir, "init", "-q", "-b", "main");
    Files.writeString(dir.resolve("README.md"), "hello " + name + "\n");
    ok(dir, "add", ".");
    ok(dir, "commit", "-q", "-m", "initial commit");
    return dir;
  }

  /** Commits everything in {@code work} with {@code message} and pushes main to {@code url}. */
  public void commitAllAndPush(Path work, String message, String url)
      throws IOException, InterruptedException {
    ok(work, "add", ".");
    ok(work, "commit", "-q", "-m", message);
    ok(work, "push", "-q", url, "main");
  }

  /** The refs of a (bare) repository, as {@code for-each-ref} prints them. */
  public String refs(Path gitDir) throws IOException, InterruptedException {
    return ok(gitDir, "for-each-ref", "--format=%(refname) %(objectname)").output();
  }
}
