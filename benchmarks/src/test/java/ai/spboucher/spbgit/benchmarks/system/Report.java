package ai.spboucher.spbgit.benchmarks.system;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * What a benchmark prints and keeps: its lines go to standard output and to {@code
 * <spb.bench.out>/<name>.txt} (default {@code target/sysbench}), with the machine and the load
 * average sampled every 5 s while it ran, so a figure is never reported without the conditions it
 * was measured in.
 */
final class Report implements AutoCloseable {

  private final String name;
  private final Path file;
  private final List<Double> loads = new ArrayList<>();
  private final Thread sampler;
  private volatile boolean done;

  Report(String name, String[] args) throws IOException {
    this.name = name;
    Path dir = Path.of(System.getProperty("spb.bench.out", "target/sysbench"));
    Files.createDirectories(dir);
    this.file = dir.resolve(name + ".txt");
    Files.writeString(file, "");
    line("# " + name + " " + String.join(" ", args));
    line("machine: " + Machine.describe());
    sampler =
        new Thread(
            () -> {
              while (!done) {
                synchronized (loads) {
                  loads.add(Machine.load());
                }
                try {
                  Thread.sleep(5000);
                } catch (InterruptedException e) {
                  return;
                }
              }
            },
            "load-sampler");
    sampler.setDaemon(true);
    sampler.start();
  }

  void line(String text) {
    System.out.println(text);
    try {
      Files.writeString(file, text + "\n", StandardOpenOption.APPEND);
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  void line(String format, Object... args) {
    line(String.format(Locale.ROOT, format, args));
  }

  /** The load average while the benchmark ran: mean and max of the 5-second samples so far. */
  String load() {
    synchronized (loads) {
      double max = loads.stream().mapToDouble(Double::doubleValue).max().orElse(Double.NaN);
      double mean = loads.stream().mapToDouble(Double::doubleValue).average().orElse(Double.NaN);
      return String.format(
          Locale.ROOT,
          "load average during the run: mean %.2f, max %.2f (%d samples)",
          mean,
          max,
          loads.size());
    }
  }

  @Override
  public void close() {
    line(load());
    done = true;
    sampler.interrupt();
  }

  /** {@code --key value} pairs. */
  static Map<String, String> options(String[] args) {
    Map<String, String> options = new HashMap<>();
    for (int i = 0; i + 1 < args.length; i += 2) {
      if (!args[i].startsWith("--")) {
        throw new IllegalArgumentException("expected --option value, got " + args[i]);
      }
      options.put(args[i].substring(2), args[i + 1]);
    }
    return options;
  }

  static int intOption(Map<String, String> options, String key, int defaultValue) {
    return Integer.parseInt(options.getOrDefault(key, String.valueOf(defaultValue)));
  }

  String name() {
    return name;
  }
}
