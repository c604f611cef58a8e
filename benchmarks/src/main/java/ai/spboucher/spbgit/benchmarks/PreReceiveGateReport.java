package ai.spboucher.spbgit.benchmarks;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Pattern;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.options.Options;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;
import org.openjdk.jmh.runner.options.VerboseMode;

/**
 * Runs {@link PreReceiveGateBenchmark} and prints the ratio of the gate's throughput to the raw signature
 * check's, then times a small push to the real gateway and prints the gate's share of it.
 *
 * <p>The machine is shared, so the two benchmarks run in alternating rounds (one fork each, the order swapped
 * every round) and each round yields its own ratio: load that comes and goes hits both sides of a round
 * alike, and the median over rounds leaves out the rounds it hit unevenly.
 *
 * <p>{@code java -cp spb-benchmarks.jar ai.spboucher.spbgit.benchmarks.PreReceiveGateReport [--rounds N]
 * [--pushes N] [--gateway-jar PATH | --no-push]}
 */
public final class PreReceiveGateReport {

  private static final String USAGE =
      "usage: PreReceiveGateReport [--rounds N] [--pushes N] [--gateway-jar PATH | --no-push]";
  /** The signature code only reaches its steady state after several seconds of C2 compilation. */
  private static final int WARMUP_SECONDS = 10;
  private static final int MEASURED_SECONDS = 5;
  private static final int PUSH_WARMUPS = 10;
  /** Each push authenticates twice: {@code info/refs} and {@code git-receive-pack} both verify the token. */
  private static final int GATE_RUNS_PER_PUSH = 2;

  private PreReceiveGateReport() {
  }

  public static void main(String[] args) throws Exception {
    Map<String, String> options = options(args);
    int rounds = Integer.parseInt(options.getOrDefault("--rounds", "5"));
    int pushes = Integer.parseInt(options.getOrDefault("--pushes", "30"));
    Path gatewayJar = Path.of(options.getOrDefault("--gateway-jar", "gateway-verticle/target/spb-gateway.jar"));

    System.out.printf("Pre-receive gate: JMH, 1 thread, per round one fork of each benchmark "
        + "(%d s warm-up, %d s measured, median of 1 s iterations)%n", WARMUP_SECONDS, MEASURED_SECONDS);
    System.out.printf("%-7s %14s %14s %9s%n", "round", "gate ops/s", "raw ops/s", "gate/raw");
    List<Double> gate = new ArrayList<>();
    List<Double> raw = new ArrayList<>();
    List<Double> ratios = new ArrayList<>();
    for (int round = 1; round <= rounds; round++) {
      double g;
      double r;
      if (round % 2 == 1) {
        g = throughput("gate");
        r = throughput("rawVerify");
      } else {
        r = throughput("rawVerify");
        g = throughput("gate");
      }
      gate.add(g);
      raw.add(r);
      ratios.add(g / r);
      System.out.printf(Locale.ROOT, "%-7d %14.1f %14.1f %8.2fx%n", round, g, r, g / r);
    }
    double gateOps = Stats.median(gate);
    double rawOps = Stats.median(raw);
    double ratio = Stats.median(ratios);
    System.out.printf(Locale.ROOT, "%-7s %14.1f %14.1f %8.2fx   (target >= 0.80x: %s)%n", "median", gateOps, rawOps,
        ratio, ratio >= 0.8 ? "met" : "MISSED");
    double gateMicros = 1e6 / gateOps;
    System.out.printf(Locale.ROOT, "gate: %.1f us per request; raw verify: %.1f us%n", gateMicros, 1e6 / rawOps);

    if (options.containsKey("--no-push")) {
      return;
    }
    SmallPushTiming.Result push = SmallPushTiming.measure(gatewayJar, PUSH_WARMUPS, pushes);
    double gatePerPushMs = GATE_RUNS_PER_PUSH * gateMicros / 1000;
    double share = 100 * gatePerPushMs / push.jobPushMs();
    System.out.printf(Locale.ROOT, "%nSmall push end to end: git push over HTTP to %s (%s), one new commit with "
        + "one small file, median of %d after %d warm-ups%n", gatewayJar.getFileName(),
        push.withNats() ? "with its own nats-server" : "without NATS", push.pushes(), PUSH_WARMUPS);
    System.out.printf(Locale.ROOT, "  job token into refs/agents/<job>/proposal: %8.1f ms (a new job and token each push)%n",
        push.jobPushMs());
    System.out.printf(Locale.ROOT, "  owner token into refs/heads/owner:          %8.1f ms (no job-token gate)%n",
        push.ownerPushMs());
    System.out.printf(Locale.ROOT, "  gate per push (%d x %.1f us) = %.3f ms = %.2f%% of the push (target < 1%%: %s)%n",
        GATE_RUNS_PER_PUSH, gateMicros, gatePerPushMs, share, share < 1 ? "met" : "MISSED");
  }

  /** The median of one fork's measured iterations, in operations per second. */
  private static double throughput(String benchmark) throws Exception {
    Options options = new OptionsBuilder()
        .include("^" + Pattern.quote(PreReceiveGateBenchmark.class.getName() + "." + benchmark) + "$")
        .warmupIterations(WARMUP_SECONDS).warmupTime(TimeValue.seconds(1))
        .measurementIterations(MEASURED_SECONDS).measurementTime(TimeValue.seconds(1))
        .forks(1)
        .verbosity(VerboseMode.SILENT)
        .build();
    RunResult result = new Runner(options).runSingle();
    List<Double> scores = result.getBenchmarkResults().stream()
        .flatMap(b -> b.getIterationResults().stream())
        .map(i -> i.getPrimaryResult().getScore())
        .toList();
    return Stats.median(scores);
  }

  private static Map<String, String> options(String[] args) {
    Map<String, String> options = new HashMap<>();
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--no-push" -> options.put(args[i], "");
        case "--rounds", "--pushes", "--gateway-jar" -> {
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
