package ai.spboucher.spbgit.benchmarks.system;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.StringJoiner;

/**
 * CPU time (user + system) of the processes taking part in a benchmark, read from {@code
 * /proc/<pid>/stat}, so a report can say where the machine's two cores went: this client, the
 * gateway, the runner, nats-server, the Docker daemon and containerd.
 */
final class CpuMeter {

  private static final double TICKS_PER_SECOND = 100.0;
  private final Map<String, Long> pids = new LinkedHashMap<>();

  CpuMeter(SystemBed bed) {
    pids.put("client", ProcessHandle.current().pid());
    pids.put("gateway", bed.gateway.pid());
    bed.runnerPids().forEach((id, pid) -> pids.put("runner " + id, pid));
    findPid("nats-server", bed.dir.toString()).ifPresent(pid -> pids.put("nats-server", pid));
    pidFile("/var/run/docker.pid").ifPresent(pid -> pids.put("dockerd", pid));
    pidFile("/var/run/docker/containerd/containerd.pid")
        .ifPresent(pid -> pids.put("containerd", pid));
  }

  /** CPU seconds so far, by process. */
  Map<String, Double> sample() {
    Map<String, Double> cpu = new LinkedHashMap<>();
    pids.forEach((name, pid) -> cpu.put(name, seconds(pid)));
    return cpu;
  }

  /** "name 1.2 s, ..." for what each process used between two samples. */
  static String difference(Map<String, Double> before, Map<String, Double> after) {
    StringJoiner out = new StringJoiner(", ");
    double total = 0;
    for (var e : after.entrySet()) {
      double used = e.getValue() - before.getOrDefault(e.getKey(), 0.0);
      total += used;
      out.add(String.format(Locale.ROOT, "%s %.2f s", e.getKey(), used));
    }
    return String.format(Locale.ROOT, "CPU: %s (total %.2f s)", out, total);
  }

  private static double seconds(long pid) {
    try {
      String stat = Files.readString(Path.of("/proc", String.valueOf(pid), "stat"));
      // The command name (field 2) may hold spaces: count fields after its closing parenthesis.
      String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
      return (Long.parseLong(fields[11]) + Long.parseLong(fields[12])) / TICKS_PER_SECOND;
    } catch (IOException | RuntimeException e) {
      return Double.NaN;
    }
  }

  private static java.util.Optional<Long> pidFile(String file) {
    try {
      return java.util.Optional.of(Long.parseLong(Files.readString(Path.of(file)).strip()));
    } catch (IOException | NumberFormatException e) {
      return java.util.Optional.empty();
    }
  }

  /** The process whose command line starts with {@code command} and mentions {@code marker}. */
  private static java.util.Optional<Long> findPid(String command, String marker) {
    return ProcessHandle.allProcesses()
        .filter(
            p ->
                p.info()
                    .commandLine()
                    .map(c -> c.contains(command) && c.contains(marker))
                    .orElse(false))
        .map(ProcessHandle::pid)
        .findFirst();
  }
}
