package ai.spboucher.spbgit.benchmarks.system;

import ai.spboucher.spbgit.testsupport.LogViewer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Fan-out: many websocket viewers of one job against one viewer of the same job, in the same run.
 * Each job sleeps 5 s (so every viewer is connected before it prints), then prints numbered lines
 * of about 100 bytes carrying the time they were printed. Every viewer must get every line once, in
 * order, and the end frame.
 *
 * <p>A viewer's throughput is the job's bytes over the time from the first line being printed to
 * that viewer receiving the last one: it includes how far the viewer lags behind the job. Two
 * scenarios:
 *
 * <ul>
 *   <li><b>live</b>: {@code --lines} lines at {@code --rate} lines/s, a job printing steadily, as
 *       owners follow it;
 *   <li><b>burst</b>: {@code --burst-lines} lines printed as fast as the container can, the most
 *       the gateway must push to every viewer at once.
 * </ul>
 *
 * <p>Options: {@code --viewers 200 --runs 3 --lines 10000 --rate 1000 --burst-lines 20000}.
 */
public final class FanOutBenchmark {

  private static final int PADDING = 75;
  private static final String PAD = "x".repeat(PADDING);

  private FanOutBenchmark() {}

  /** What one viewer saw. */
  private static final class Seen {
    long expected = 1;
    long bad;
    long firstPrinted;
    long lastArrival;
    long bytes;
    final List<Double> latencies = new ArrayList<>();
  }

  /** The outcome of one job watched by {@code viewers} viewers. */
  private record Outcome(
      int complete,
      double medianThroughput,
      double minThroughput,
      double p99LatencyMs,
      int reconnects,
      long connectMs) {}

  public static void main(String[] args) throws Exception {
    var options = Report.options(args);
    int viewers = Report.intOption(options, "viewers", 200);
    int runs = Report.intOption(options, "runs", 3);
    int lines = Report.intOption(options, "lines", 10_000);
    int rate = Report.intOption(options, "rate", 1000);
    int burstLines = Report.intOption(options, "burst-lines", 20_000);
    try (Report report = new Report("fan-out", args);
        SystemBed bed = SystemBed.start("30m")) {
      bed.startRunner("sysbench", Map.of());
      bed.createRepo("bench");
      report.line(
          "start load %.2f", Machine.awaitQuiet(1.5, Report.intOption(options, "quiet-wait", 600)));
      scenario(report, bed, "live", lines, rate, viewers, runs);
      scenario(report, bed, "burst", burstLines, 0, viewers, runs);
    }
  }

  private static void scenario(
      Report report, SystemBed bed, String name, int lines, int rate, int viewers, int runs)
      throws Exception {
    List<Double> single = new ArrayList<>();
    List<Double> many = new ArrayList<>();
    List<Double> manyMin = new ArrayList<>();
    int incomplete = 0;
    int mark = bed.gcMark();
    CpuMeter cpu = new CpuMeter(bed);
    for (int run = 1; run <= runs; run++) {
      var before = cpu.sample();
      Outcome one = watch(bed, lines, rate, 1);
      var between = cpu.sample();
      Outcome all = watch(bed, lines, rate, viewers);
      report.line("%s run %d: 1 viewer %s", name, run, CpuMeter.difference(before, between));
      report.line(
          "%s run %d: %d viewers %s",
          name, run, viewers, CpuMeter.difference(between, cpu.sample()));
      report.line(
          "%s run %d: 1 viewer %.2f MB/s (p99 latency %.0f ms); %d viewers: %d complete, median %.2f MB/s, "
              + "slowest %.2f MB/s (p99 latency %.0f ms, %d reconnects, all connected in %d ms)",
          name,
          run,
          one.medianThroughput(),
          one.p99LatencyMs(),
          viewers,
          all.complete(),
          all.medianThroughput(),
          all.minThroughput(),
          all.p99LatencyMs(),
          all.reconnects(),
          all.connectMs());
      incomplete += (1 - one.complete()) + (viewers - all.complete());
      single.add(one.medianThroughput());
      many.add(all.medianThroughput());
      manyMin.add(all.minThroughput());
    }
    double s = Stats.median(single);
    double m = Stats.median(many);
    double worst = Stats.median(manyMin);
    String verdict =
        incomplete > 0
            ? "MISSED (" + incomplete + " viewers incomplete)"
            : worst / s >= 0.5
                ? "MET"
                : (m / s >= 0.5 ? "MET at the median, MISSED by the slowest" : "MISSED");
    report.line(
        "RESULT fan-out %s (%d lines%s), median over %d runs: 1 viewer %.2f MB/s; %d viewers, %s: median "
            + "%.2f MB/s per viewer (%.2fx), slowest %.2f MB/s (%.2fx); target every viewer complete and >= 0.5x: %s",
        name,
        lines,
        rate > 0 ? " at " + rate + "/s" : " flat out",
        runs,
        s,
        viewers,
        incomplete == 0 ? "every one complete" : incomplete + " incomplete",
        m,
        m / s,
        worst,
        worst / s,
        verdict);
    report.line(
        "fan-out %s: gateway heap max %.1f MiB after GC, peak %.1f MiB (%d collections)",
        name,
        bed.maxHeapAfterGcSince(mark) / 1048576.0,
        bed.maxHeapBeforeGcSince(mark) / 1048576.0,
        bed.gcCountSince(mark));
  }

  private static Outcome watch(SystemBed bed, int lines, int rate, int viewers) throws Exception {
    var job =
        bed.submit("bench", "sleep 5; " + LogLatencyBenchmark.timedLines(lines, rate, PADDING));
    List<LogViewer> all = new ArrayList<>();
    List<Seen> seen = new ArrayList<>();
    List<CompletableFuture<?>> opened = new ArrayList<>();
    long t0 = System.nanoTime();
    for (int i = 0; i < viewers; i++) {
      Seen s = new Seen();
      LogViewer viewer =
          new LogViewer(
              bed.http(),
              bed.baseUrl,
              "bench",
              job.id(),
              bed.ownerToken,
              (stream, line, arrival, published) -> {
                long printed =
                    stream.equals("stdout") ? LogLatencyBenchmark.printedMicros(line) : -1;
                if (printed < 0) {
                  return;
                }
                boolean intact =
                    line.length() == line.indexOf(' ') + 17 + PADDING && line.endsWith(PAD);
                if (LogLatencyBenchmark.number(line) != s.expected++ || !intact) {
                  s.bad++;
                }
                s.bytes += line.length() + 1;
                if (s.firstPrinted == 0) {
                  s.firstPrinted = printed;
                }
                s.lastArrival = arrival;
                s.latencies.add((arrival - printed) / 1000.0);
              });
      all.add(viewer);
      seen.add(s);
      opened.add(viewer.start());
    }
    CompletableFuture.allOf(opened.toArray(CompletableFuture[]::new)).get(120, TimeUnit.SECONDS);
    long connectMs = (System.nanoTime() - t0) / 1_000_000;
    String exit = bed.awaitFinished(job.id(), Duration.ofMinutes(20));
    if (!"ok".equals(exit)) {
      throw new IllegalStateException("job " + job.id() + " ended " + exit);
    }
    try {
      CompletableFuture.allOf(all.stream().map(LogViewer::end).toArray(CompletableFuture[]::new))
          .get(5, TimeUnit.MINUTES);
    } catch (java.util.concurrent.TimeoutException e) {
      // Counted below as viewers that did not complete.
    }
    List<Double> throughputs = new ArrayList<>();
    List<Double> latencies = new ArrayList<>();
    int reconnects = 0;
    int complete = 0;
    for (int i = 0; i < viewers; i++) {
      Seen s = seen.get(i);
      LogViewer viewer = all.get(i);
      reconnects += viewer.connects() - 1;
      if (!viewer.end().isDone() || s.expected - 1 != lines || s.bad != 0 || viewer.gaps() != 0) {
        System.out.printf(
            "viewer %d of job %s incomplete: ended %s, %d of %d lines, %d wrong or out of order, "
                + "%d missing chunks, %d connections, %d resumes%n",
            i,
            job.id(),
            viewer.end().isDone(),
            s.expected - 1,
            lines,
            s.bad,
            viewer.gaps(),
            viewer.connects(),
            viewer.resumes());
        continue;
      }
      complete++;
      throughputs.add((double) s.bytes / (s.lastArrival - s.firstPrinted));
      latencies.addAll(s.latencies);
    }
    if (complete == 0) {
      return new Outcome(0, 0, 0, Double.NaN, reconnects, connectMs);
    }
    Stats t = Stats.of(throughputs);
    return new Outcome(
        complete, t.p50(), t.min(), Stats.of(latencies).p99(), reconnects, connectMs);
  }
}
