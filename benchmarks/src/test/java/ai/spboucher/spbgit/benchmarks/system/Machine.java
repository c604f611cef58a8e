package ai.spboucher.spbgit.benchmarks.system;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Locale;

/**
 * The machine a benchmark runs on: what it is, and how busy it is. The benchmarks share their cores
 * with other work, so every result carries the load average seen while it was measured.
 */
final class Machine {

  private Machine() {}

  /** The 1-minute load average. */
  static double load() {
    try {
      return Double.parseDouble(Files.readString(Path.of("/proc/loadavg")).split(" ")[0]);
    } catch (IOException e) {
      return Double.NaN;
    }
  }

  /**
   * Waits until the 1-minute load average is below {@code max}, for at most {@code maxWaitSeconds};
   * returns the load it started with. A busy machine stretches every figure, so measuring starts in
   * a quiet moment if one comes.
   */
  static double awaitQuiet(double max, long maxWaitSeconds) throws InterruptedException {
    long deadline = System.nanoTime() + maxWaitSeconds * 1_000_000_000L;
    double load = load();
    while (load >= max && System.nanoTime() < deadline) {
      System.out.printf(
          Locale.ROOT, "load %.2f >= %.2f: waiting for a quieter moment%n", load, max);
      Thread.sleep(15_000);
      load = load();
    }
    return load;
  }

  /** One line describing the hardware, kernel, Java, Docker and nats-server. */
  static String describe() {
    String cpu = "?";
    try {
      cpu =
          Files.readAllLines(Path.of("/proc/cpuinfo")).stream()
              .filter(l -> l.startsWith("model name"))
              .findFirst()
              .map(l -> l.substring(l.indexOf(':') + 1).trim())
              .orElse("?");
    } catch (IOException e) {
      // Not Linux: the model stays unknown.
    }
    return String.format(
        Locale.ROOT,
        "%d cores (%s), %d MiB RAM, Linux %s, Java %s, Docker %s, %s, at %s",
        Runtime.getRuntime().availableProcessors(),
        cpu,
        totalMemoryMiB(),
        System.getProperty("os.version"),
        System.getProperty("java.version"),
        command("docker", "version", "--format", "{{.Server.Version}}"),
        command("nats-server", "--version"),
        Instant.now());
  }

  private static long totalMemoryMiB() {
    try {
      return Files.readAllLines(Path.of("/proc/meminfo")).stream()
          .filter(l -> l.startsWith("MemTotal:"))
          .findFirst()
          .map(l -> Long.parseLong(l.replaceAll("\\D", "")) / 1024)
          .orElse(0L);
    } catch (IOException e) {
      return 0;
    }
  }

  static String command(String... args) {
    try {
      Process p = new ProcessBuilder(List.of(args)).redirectErrorStream(true).start();
      String out = new String(p.getInputStream().readAllBytes()).strip();
      p.waitFor();
      return out;
    } catch (IOException | InterruptedException e) {
      return "?";
    }
  }
}
