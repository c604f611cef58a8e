package ai.spboucher.spbgit.benchmarks.system;

import ai.spboucher.spbgit.testsupport.LogViewer;
import ai.spboucher.spbgit.testsupport.WallClock;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Live log latency: from a line printed in the job's container to a websocket viewer of the job, at
 * a steady 1,000 lines/s, against {@code docker logs -f} of the very same container, read at the
 * same time.
 *
 * <p>Each line carries the time it was printed ({@code gettimeofday} in the container, one {@code
 * write} per line); each reader stamps the line when it arrives (for the websocket, when its frame
 * arrived). Both clocks are this machine's real-time clock. The first second of lines is left out
 * (the viewer and {@code docker logs} attach while the job starts).
 *
 * <p>Options: {@code --runs 3 --lines 20000 --rate 1000}.
 */
public final class LogLatencyBenchmark {

  private LogLatencyBenchmark() {}

  /**
   * A shell command printing {@code lines} lines "{@code <n> <epoch µs>}" at {@code rate} per
   * second (0: flat out).
   */
  static String timedLines(int lines, int rate, int padding) {
    return "perl -MTime::HiRes=gettimeofday,time,sleep -e '$|=1; my ($n,$rate,$pad)=@ARGV; my $x=\"x\" x $pad; "
        + "my $t0=time; for my $i (1..$n) { if ($rate > 0) { my $d=$t0+$i/$rate-time; sleep($d) if $d>0 } "
        + "my ($s,$us)=gettimeofday; printf \"%d %d%06d%s\\n\",$i,$s,$us,$x }' "
        + lines
        + " "
        + rate
        + " "
        + padding;
  }

  /** The printed time of a line from {@link #timedLines}, or -1 for any other line. */
  static long printedMicros(String line) {
    int space = line.indexOf(' ');
    if (space <= 0 || line.length() < space + 17) {
      return -1;
    }
    for (int i = 0; i < space + 17; i++) {
      if (i != space && !Character.isDigit(line.charAt(i))) {
        return -1;
      }
    }
    return Long.parseLong(line, space + 1, space + 17, 10);
  }

  static long number(String line) {
    return Long.parseLong(line, 0, line.indexOf(' '), 10);
  }

  public static void main(String[] args) throws Exception {
    var options = Report.options(args);
    int runs = Report.intOption(options, "runs", 3);
    int lines = Report.intOption(options, "lines", 20_000);
    int rate = Report.intOption(options, "rate", 1000);
    int skip = rate;
    try (Report report = new Report("log-latency", args);
        SystemBed bed = SystemBed.start("30m")) {
      bed.startRunner("sysbench", Map.of());
      bed.createRepo("bench");
      report.line(
          "start load %.2f", Machine.awaitQuiet(1.5, Report.intOption(options, "quiet-wait", 600)));
      List<Double> wsP99 = new ArrayList<>();
      List<Double> dockerP99 = new ArrayList<>();
      List<Double> wsP50 = new ArrayList<>();
      List<Double> dockerP50 = new ArrayList<>();
      for (int run = 1; run <= runs; run++) {
        var job = bed.submit("bench", timedLines(lines, rate, 0));
        List<Double> ws = new ArrayList<>();
        List<Double> toRunner = new ArrayList<>();
        List<Double> fromRunner = new ArrayList<>();
        long[] expected = {1};
        long[] disorder = {0};
        LogViewer viewer =
            new LogViewer(
                bed.http(),
                bed.baseUrl,
                "bench",
                job.id(),
                bed.ownerToken,
                (stream, line, arrival, published) -> {
                  long printed = stream.equals("stdout") ? printedMicros(line) : -1;
                  if (printed < 0) {
                    return;
                  }
                  long n = number(line);
                  if (n != expected[0]++) {
                    disorder[0]++;
                  }
                  if (n > skip) {
                    ws.add((arrival - printed) / 1000.0);
                    // The runner stamps chunks in milliseconds: these two halves are good to about
                    // 1 ms.
                    toRunner.add(published - printed / 1000.0);
                    fromRunner.add(arrival / 1000.0 - published);
                  }
                });
        viewer.start().get(30, TimeUnit.SECONDS);
        bed.times(job.id()).startedSeen.get(120, TimeUnit.SECONDS);
        List<Double> docker = new ArrayList<>();
        Thread follower = dockerLogs("spb-job-" + job.id(), skip, docker);
        String exit = bed.awaitFinished(job.id(), Duration.ofMinutes(10));
        viewer.end().get(60, TimeUnit.SECONDS);
        follower.join(60_000);
        if (!"ok".equals(exit) || expected[0] - 1 != lines || disorder[0] != 0) {
          throw new IllegalStateException(
              "job "
                  + job.id()
                  + " ended "
                  + exit
                  + "; viewer saw "
                  + (expected[0] - 1)
                  + " lines, "
                  + disorder[0]
                  + " out of order");
        }
        Stats w = Stats.of(ws);
        Stats d = Stats.of(docker);
        report.line("run %d (%s): websocket %s", run, job.id(), w.describe("ms"));
        report.line(
            "run %d (%s):   of which printed->runner published %s",
            run, job.id(), Stats.of(toRunner).describe("ms"));
        report.line(
            "run %d (%s):   of which runner published->viewer %s",
            run, job.id(), Stats.of(fromRunner).describe("ms"));
        report.line("run %d (%s): docker logs -f %s", run, job.id(), d.describe("ms"));
        report.line(
            "run %d: viewer connections %d, resumes %d", run, viewer.connects(), viewer.resumes());
        wsP99.add(w.p99());
        dockerP99.add(d.p99());
        wsP50.add(w.p50());
        dockerP50.add(d.p50());
      }
      double p99 = Stats.median(wsP99);
      double base = Stats.median(dockerP99);
      report.line(
          "RESULT log latency at %d lines/s, median over %d runs: websocket p50 %.1f ms, p99 %.1f ms; "
              + "docker logs -f p50 %.1f ms, p99 %.1f ms; p99 ratio %.2fx (target p99 <= 100 ms): %s",
          rate,
          runs,
          Stats.median(wsP50),
          p99,
          Stats.median(dockerP50),
          base,
          p99 / base,
          p99 <= 100 ? "MET" : "MISSED");
    }
  }

  /**
   * Follows {@code docker logs -f} of the container on a thread, adding each timed line's latency
   * after {@code skip}.
   */
  private static Thread dockerLogs(String container, int skip, List<Double> latencies) {
    Thread thread =
        new Thread(
            () -> {
              try {
                Process p =
                    new ProcessBuilder("docker", "logs", "-f", container)
                        .redirectError(ProcessBuilder.Redirect.DISCARD)
                        .start();
                try (BufferedReader out =
                    new BufferedReader(
                        new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
                  for (String line = out.readLine(); line != null; line = out.readLine()) {
                    long arrival = WallClock.micros();
                    long printed = printedMicros(line);
                    if (printed >= 0 && number(line) > skip) {
                      latencies.add((arrival - printed) / 1000.0);
                    }
                  }
                }
                p.waitFor();
              } catch (Exception e) {
                throw new IllegalStateException(e);
              }
            },
            "docker-logs");
    thread.start();
    return thread;
  }
}
