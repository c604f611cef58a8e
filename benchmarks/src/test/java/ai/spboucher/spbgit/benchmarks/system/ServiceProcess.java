package ai.spboucher.spbgit.benchmarks.system;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A gateway or runner as its own JVM, started from this benchmark's class path, as it runs in
 * production: its own heap, threads and garbage collector, so its heap can be read from its GC log
 * and its CPU does not mix with the measuring client's.
 */
final class ServiceProcess implements AutoCloseable {

  private final String name;
  private final Process process;
  private final Path log;

  private ServiceProcess(String name, Process process, Path log) {
    this.name = name;
    this.process = process;
    this.log = log;
  }

  /**
   * Starts {@code mainClass} with {@code env} added to this process's environment, and waits until
   * its log matches {@code ready}; returns once it does (the match is then in {@link #readyMatch}).
   */
  static ServiceProcess start(
      String name,
      String mainClass,
      List<String> jvmArgs,
      Map<String, String> env,
      Path log,
      Pattern ready)
      throws Exception {
    List<String> command = new ArrayList<>();
    // spb.bench.<name>Java picks another JDK for one process (e.g. the gateway on a newer release).
    String javaHome = System.getProperty("spb.bench." + name + "Java", "");
    command.add(
        Path.of(javaHome.isBlank() ? System.getProperty("java.home") : javaHome, "bin", "java")
            .toString());
    command.addAll(jvmArgs);
    command.add("-cp");
    command.add(System.getProperty("java.class.path"));
    command.add(mainClass);
    ProcessBuilder builder =
        new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile());
    builder.environment().putAll(env);
    ServiceProcess service = new ServiceProcess(name, builder.start(), log);
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
    while (!ready.matcher(service.log()).find()) {
      if (!service.process.isAlive()) {
        throw new IOException(
            name + " exited with " + service.process.exitValue() + ":\n" + service.log());
      }
      if (System.nanoTime() > deadline) {
        service.close();
        throw new IOException(name + " was not ready within 120 s:\n" + service.log());
      }
      Thread.sleep(100);
    }
    return service;
  }

  /** The first match of {@code pattern} in the log, or throws. */
  Matcher find(Pattern pattern) throws IOException {
    Matcher m = pattern.matcher(log());
    if (!m.find()) {
      throw new IllegalStateException(pattern + " is not in the log of " + name);
    }
    return m;
  }

  String log() throws IOException {
    return Files.exists(log) ? Files.readString(log) : "";
  }

  long pid() {
    return process.pid();
  }

  boolean isAlive() {
    return process.isAlive();
  }

  /** SIGTERM, as an operator stops it; SIGKILL if it has not exited after 60 s. */
  @Override
  public void close() throws InterruptedException {
    if (process.isAlive()) {
      process.destroy();
      if (!process.waitFor(60, TimeUnit.SECONDS)) {
        process.destroyForcibly();
        process.waitFor(10, TimeUnit.SECONDS);
      }
    }
  }
}
