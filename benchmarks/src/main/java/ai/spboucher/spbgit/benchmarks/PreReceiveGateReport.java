package ai.spboucher.spbgit.benchmarks;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Pattern;
import org.openjdk.jmh.results.IterationResult;
import org.openjdk.jmh.results.Result;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.options.Options;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;
import org.openjdk.jmh.runner.options.VerboseMode;

/**
 * Runs {@link PreReceiveGateBenchmark}'s side-by-side group and prints the ratio of the gate's
 * throughput to the raw signature check's, then times a small push to the real gateway and prints
 * the gate's share of it.
 *
 * <p>The machine is shared, so the gate and its baseline run at the same time, one thread each:
 * every 1 s iteration gives one ratio measured under one load, and the median over all iterations
 * of all forks leaves out the iterations that load hit unevenly.
 *
 * <p>{@code java -cp spb-benchmarks.jar ai.spboucher.spbgit.benchmarks.PreReceiveGateReport
 * [--forks N] [--pushes N] [--gateway-jar PATH | --no-push]}
 */
public final class PreReceiveGateReport {

  private static final String USAGE =
      "usage: PreReceiveGateReport [--forks N] [--pushes N] [--gateway-jar PATH | --no-push]";

  /** The signature code only reaches its steady state after several seconds of C2 compilation. */
  private static final int WARMUP_SECONDS = 10;

  private static final int MEASURED_SECONDS = 10;
  private static final int PUSH_WARMUPS = 10;

  private PreReceiveGateReport() {}

  public static void main(String[] args) throws Exception {
    Map<String, String> options = options(args);
    int forks = Integer.parseInt(options.getOrDefault("--forks", "3"));
    int pushes = Integer.parseInt(options.getOrDefault("--pushes", "30"));
    Path gatewayJar =
        Path.of(options.getOrDefault("--gateway-jar", "gateway-verticle/target/spb-gateway.jar"));

    List<Double> gate = new ArrayList<>();
    List<Double> raw = new ArrayList<>();
    List<Double> ratios = new ArrayList<>();
    List<Double> gateCpu = new ArrayList<>();
    List<Double> rawCpu = new ArrayList<>();
    List<Double> cpuRatios = new ArrayList<>();
    System.out.printf(
        "Pre-receive gate for one push (two authenticated requests and the ref check) against one raw "
            + "ES256 verify:%nJMH, side by side (one thread each), %d fork(s) of %d s warm-up and %d measured 1 s "
            + "iterations%n",
        forks, WARMUP_SECONDS, MEASURED_SECONDS);
    System.out.printf(
        "%-7s %12s %12s %9s   %14s %14s %9s%n",
        "fork",
        "gate ops/s",
        "raw ops/s",
        "gate/raw",
        "gate CPU us/op",
        "raw CPU us/op",
        "gate/raw");
    for (int fork = 1; fork <= forks; fork++) {
      int first = gate.size();
      for (IterationResult iteration : sideBySide()) {
        Map<String, Result> counters = iteration.getSecondaryResults();
        double g = counters.get("gateSideBySide").getScore();
        double r = counters.get("rawVerifySideBySide").getScore();
        double gc =
            counters.get("gateCpuNanos").getScore() / 1e3 / counters.get("gateOps").getScore();
        double rc =
            counters.get("rawCpuNanos").getScore() / 1e3 / counters.get("rawOps").getScore();
        gate.add(g);
        raw.add(r);
        ratios.add(g / r);
        gateCpu.add(gc);
        rawCpu.add(rc);
        // Throughput per CPU second, gate over raw: the inverse ratio of CPU time per operation.
        cpuRatios.add(rc / gc);
      }
      printRow(
          String.valueOf(fork),
          gate.subList(first, gate.size()),
          raw.subList(first, raw.size()),
          ratios.subList(first, ratios.size()),
          gateCpu.subList(first, gateCpu.size()),
          rawCpu.subList(first, rawCpu.size()),
          cpuRatios.subList(first, cpuRatios.size()));
    }
    printRow("median", gate, raw, ratios, gateCpu, rawCpu, cpuRatios);
    double ratio = Stats.median(ratios);
    double cpuRatio = Stats.median(cpuRatios);
    System.out.printf(
        Locale.ROOT,
        "gate/raw throughput: %.2fx by wall clock, %.2fx per CPU second (medians of %d "
            + "iterations; target >= 0.80x: %s)%n",
        ratio,
        cpuRatio,
        ratios.size(),
        Math.min(ratio, cpuRatio) >= 0.8 ? "met" : "MISSED");
    double gateCpuMs = Stats.median(gateCpu) / 1000;
    System.out.printf(
        Locale.ROOT,
        "gate per push: %.2f ms of CPU (%.2f ms by wall clock); raw verify: %.2f ms of CPU "
            + "(%.2f ms)%n",
        gateCpuMs,
        1e3 / Stats.median(gate),
        Stats.median(rawCpu) / 1000,
        1e3 / Stats.median(raw));

    if (options.containsKey("--no-push")) {
      return;
    }
    SmallPushTiming.Result push = SmallPushTiming.measure(gatewayJar, PUSH_WARMUPS, pushes);
    System.out.printf(
        Locale.ROOT,
        "%nSmall push end to end: git push over HTTP to %s (%s), one new commit with "
            + "one small file, medians of %d after %d warm-ups%n",
        gatewayJar.getFileName(),
        push.withNats() ? "with its own nats-server" : "without NATS",
        push.pushes(),
        PUSH_WARMUPS);
    System.out.printf("  %-52s %9s %16s%n", "", "wall ms", "gateway CPU ms");
    System.out.printf(
        Locale.ROOT,
        "  %-52s %9.1f %16.1f%n",
        "job token into refs/agents/<job>/proposal (new job each)",
        push.jobPushMs(),
        push.jobGatewayCpuMs());
    System.out.printf(
        Locale.ROOT,
        "  %-52s %9.1f %16.1f%n",
        "owner token into refs/heads/owner (no job-token gate)",
        push.ownerPushMs(),
        push.ownerGatewayCpuMs());
    // The gate's CPU time is its wall-clock time whenever it has a core to itself.
    double share = 100 * gateCpuMs / push.jobPushMs();
    System.out.printf(
        Locale.ROOT,
        "  gate: %.2f ms = %.2f%% of the job push's wall-clock time (target < 1%%: %s), "
            + "%.1f%% of the gateway's CPU time for it%n",
        gateCpuMs,
        share,
        share < 1 ? "met" : "MISSED",
        100 * gateCpuMs / push.jobGatewayCpuMs());
    System.out.printf(
        Locale.ROOT,
        "  in the running gateway a job push costs %.1f ms of CPU more than an owner push%n",
        push.jobGatewayCpuMs() - push.ownerGatewayCpuMs());
  }

  private static void printRow(
      String label,
      List<Double> gate,
      List<Double> raw,
      List<Double> ratios,
      List<Double> gateCpu,
      List<Double> rawCpu,
      List<Double> cpuRatios) {
    System.out.printf(
        Locale.ROOT,
        "%-7s %12.1f %12.1f %8.2fx   %14.1f %14.1f %8.2fx%n",
        label,
        Stats.median(gate),
        Stats.median(raw),
        Stats.median(ratios),
        Stats.median(gateCpu),
        Stats.median(rawCpu),
        Stats.median(cpuRatios));
  }

  /** The measured iterations of one fork of the side-by-side group. */
  private static Collection<IterationResult> sideBySide() throws Exception {
    Options options =
        new OptionsBuilder()
            .include(
                "^"
                    + Pattern.quote(PreReceiveGateBenchmark.class.getName() + ".side_by_side")
                    + "$")
            .warmupIterations(WARMUP_SECONDS)
            .warmupTime(TimeValue.seconds(1))
            .measurementIterations(MEASURED_SECONDS)
            .measurementTime(TimeValue.seconds(1))
            .forks(1)
            .verbosity(VerboseMode.SILENT)
            .build();
    RunResult result = new Runner(options).runSingle();
    List<IterationResult> iterations = new ArrayList<>();
    result.getBenchmarkResults().forEach(b -> iterations.addAll(b.getIterationResults()));
    return iterations;
  }

  private static Map<String, String> options(String[] args) {
    Map<String, String> options = new HashMap<>();
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--no-push" -> options.put(args[i], "");
        case "--forks", "--pushes", "--gateway-jar" -> {
          if (i + 1 >= args.length) {
            throw new IllegalArgumentException(args[i] + " needs a value\n" + USAGE);
          }
          options.put(args[i], args[++i]);
        }
        default -> throw new IllegalArgumentException("unknown option " + args[i] + "\n" + USAGE);
      }
    }
    return options;
  }
}
