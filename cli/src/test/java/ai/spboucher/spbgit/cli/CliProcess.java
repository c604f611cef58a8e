package ai.spboucher.spbgit.cli;

import ai.spboucher.spbgit.gateway.TestGateway;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Runs the real {@code spbgit-cli.jar} as a process, as a user's shell would, with stdin and stdout
 * as pipes (not terminals) and a private HOME, so no config file of the machine is read.
 */
final class CliProcess {

  /** What one run printed and returned. */
  record Result(int exit, String out, String err) {

    java.util.List<String> errLines() {
      return err.lines().toList();
    }

    @Override
    public String toString() {
      return "exit " + exit + "\n--- stdout\n" + out + "--- stderr\n" + err;
    }
  }

  private final Path jar;
  private final Map<String, String> env = new HashMap<>();

  CliProcess(Path home) {
    String jarProperty = System.getProperty("spbgit.cli.jar");
    if (jarProperty == null) {
      throw new IllegalStateException(
          "system property spbgit.cli.jar is not set (run through failsafe)");
    }
    this.jar = Path.of(jarProperty);
    if (!Files.isRegularFile(jar)) {
      throw new IllegalStateException(jar + " does not exist: run 'mvn package' first");
    }
    env.put("HOME", home.toString());
    env.put("XDG_CONFIG_HOME", home.resolve(".config").toString());
  }

  /** {@code spbgit} as the owner of {@code gateway}, with its HOME at {@code home}. */
  static CliProcess owner(Path home, TestGateway gateway) throws IOException {
    return new CliProcess(Files.createDirectories(home))
        .gateway(gateway.baseUrl, gateway.ownerToken);
  }

  /** Sets {@code SPB_URL} and {@code SPB_TOKEN} (null removes a variable). */
  CliProcess gateway(String url, String token) {
    set("SPB_URL", url);
    set("SPB_TOKEN", token);
    return this;
  }

  CliProcess set(String name, String value) {
    if (value == null) {
      env.remove(name);
    } else {
      env.put(name, value);
    }
    return this;
  }

  Result run(String... args) throws Exception {
    return runWithInput("", args);
  }

  Result runWithInput(String stdin, String... args) throws Exception {
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    // The flags the launcher uses: a short-lived client starts faster with C1 only and the serial
    // collector.
    command.add("-XX:TieredStopAtLevel=1");
    command.add("-XX:+UseSerialGC");
    command.add("-jar");
    command.add(jar.toString());
    command.addAll(List.of(args));
    ProcessBuilder builder = new ProcessBuilder(command);
    builder.environment().keySet().removeIf(k -> k.startsWith("SPB_") || k.equals("NO_COLOR"));
    builder.environment().putAll(env);
    Process process = builder.start();
    CompletableFuture<String> out = read(process.getInputStream());
    CompletableFuture<String> err = read(process.getErrorStream());
    process.getOutputStream().write(stdin.getBytes(StandardCharsets.UTF_8));
    process.getOutputStream().close();
    if (!process.waitFor(180, TimeUnit.SECONDS)) {
      process.destroyForcibly();
      throw new AssertionError(
          "spbgit "
              + String.join(" ", args)
              + " did not end within 180 s; stdout so far:\n"
              + out.getNow(""));
    }
    return new Result(process.exitValue(), out.get(), err.get());
  }

  private static CompletableFuture<String> read(InputStream stream) {
    return CompletableFuture.supplyAsync(
        () -> {
          try {
            return new String(stream.readAllBytes(), StandardCharsets.UTF_8);
          } catch (IOException e) {
            throw new IllegalStateException(e);
          }
        });
  }
}
