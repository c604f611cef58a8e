package ai.spboucher.spbgit.benchmarks.system;

import ai.spboucher.spbgit.runner.docker.SandboxSpec;
import ai.spboucher.spbgit.testsupport.LogViewer;
import ai.spboucher.spbgit.testsupport.WallClock;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Log throughput: a job printing 1,000,000 numbered 100-byte lines (100 MB) as fast as it can, read
 * by one websocket viewer, against the same output of the same image with the same flags read from
 * an attached {@code docker run}, runs interleaved. Every line is checked: present once, in order,
 * intact. The gateway's heap is read from its GC log (occupancy before and after each collection)
 * during the product's runs.
 *
 * <p>Throughput is counted from the first line's arrival to the last line's, so container start-up
 * is not in it (it is reported separately as the time from the start to the last line).
 *
 * <p>Options: {@code --runs 3 --warmup 1 --lines 1000000} ({@code --warmup} pairs of runs first,
 * not counted).
 */
public final class LogThroughputBenchmark {

  static final String PAD = "x".repeat(91);

  private LogThroughputBenchmark() {}

  /** {@code lines} lines "{@code <7-digit n> <91 x>}", 100 bytes each with the newline. */
  static String numberedLines(int lines) {
    return "seq -f '%07.0f " + PAD + "' 1 " + lines;
  }

  /** Checks each line in turn and keeps the first and last arrival times. */
  static final class LineCheck {
    long expected = 1;
    long bad;
    long firstMicros;
    long lastMicros;

    void accept(String line, long arrival) {
      boolean ok =
          line.length() == 99 && line.charAt(7) == ' ' && line.regionMatches(8, PAD, 0, 91);
      long n = -1;
      if (ok) {
        try {
          n = Long.parseLong(line, 0, 7, 10);
        } catch (NumberFormatException e) {
          ok = false;
        }
      }
      if (!ok || n != expected) {
        bad++;
      }
      if (expected == 1) {
        firstMicros = arrival;
      }
      expected++;
      lastMicros = arrival;
    }

    long seen() {
      return expected - 1;
    }
  }

  /**
   * The viewer's frames (seq, runner ts ms, arrival µs, bytes), for looking into a slow run
   * afterwards.
   */
  static void writeTrace(Path file, List<long[]> trace) throws java.io.IOException {
    StringBuilder out = new StringBuilder("seq\tts_ms\tarrival_us\tbytes\n");
    synchronized (trace) {
      for (long[] f : trace) {
        out.append(f[0])
            .append('\t')
            .append(f[1])
            .append('\t')
            .append(f[2])
            .append('\t')
            .append(f[3])
            .append('\n');
      }
    }
    Files.writeString(file, out);
  }

  public static void main(String[] args) throws Exception {
    var options = Report.options(args);
    int runs = Report.intOption(options, "runs", 3);
    int lines = Report.intOption(options, "lines", 1_000_000);
    // The gateway and runner of a deployment have run for a while: their first 100 MB run the JIT's
    // interpreted
    // and early-compiled code (about 1.7x the CPU of a later run), so the first pair of runs is not
    // counted.
    int warmup = Report.intOption(options, "warmup", 1);
    double megabytes = lines * 100 / 1e6;
    try (Report report = new Report("log-throughput", args);
        SystemBed bed = SystemBed.start("30m")) {
      bed.startRunner("sysbench", Map.of());
      bed.createRepo("bench");
      Path scratch = Files.createDirectories(bed.dir.resolve("baseline"));
      report.line(
          "start load %.2f", Machine.awaitQuiet(1.5, Report.intOption(options, "quiet-wait", 600)));
      report.line(
          "gateway heap after GC before the runs: max %.1f MiB (%d collections since start)",
          bed.maxHeapAfterGcSince(0) / 1048576.0, bed.gcCountSince(0));
      CpuMeter cpu = new CpuMeter(bed);
      List<Double> product = new ArrayList<>();
      List<Double> baseline = new ArrayList<>();
      long heapAfter = 0;
      long heapBefore = 0;
      for (int run = 1 - warmup; run <= runs; run++) {
        boolean counted = run >= 1;
        int mark = bed.gcMark();
        var cpuBefore = cpu.sample();
        var job = bed.submit("bench", numberedLines(lines));
        LineCheck check = new LineCheck();
        LogViewer viewer =
            new LogViewer(
                bed.http(),
                bed.baseUrl,
                "bench",
                job.id(),
                bed.ownerToken,
                (stream, line, arrival, published) -> {
                  if (stream.equals("stdout") && !line.startsWith("[spb-agent]")) {
                    check.accept(line, arrival);
                  }
                });
        viewer.start().get(30, TimeUnit.SECONDS);
        String exit = bed.awaitFinished(job.id(), Duration.ofMinutes(20));
        viewer.end().get(10, TimeUnit.MINUTES);
        if (!"ok".equals(exit) || check.seen() != lines || check.bad != 0 || viewer.gaps() != 0) {
          throw new IllegalStateException(
              "job "
                  + job.id()
                  + " ended "
                  + exit
                  + "; the viewer saw "
                  + check.seen()
                  + " lines, "
                  + check.bad
                  + " wrong or out of order, "
                  + viewer.gaps()
                  + " missing chunks");
        }
        writeTrace(bed.dir.resolve("frames-" + job.id() + ".tsv"), viewer.trace());
        double seconds = (check.lastMicros - check.firstMicros) / 1e6;
        double total = (check.lastMicros - bed.times(job.id()).started) / 1e6;
        if (counted) {
          product.add(megabytes / seconds);
        }
        long after = bed.maxHeapAfterGcSince(mark);
        long before = bed.maxHeapBeforeGcSince(mark);
        heapAfter = Math.max(heapAfter, after);
        heapBefore = Math.max(heapBefore, before);
        report.line(
            "run %d product (%s): %d lines intact and in order; first->last line %.2f s = %.1f MB/s; "
                + "STARTED->last line %.2f s; viewer connections %d (resumes %d); gateway heap: %d collections, "
                + "max %.1f MiB after GC, peak %.1f MiB before GC",
            run,
            job.id(),
            check.seen(),
            seconds,
            megabytes / seconds,
            total,
            viewer.connects(),
            viewer.resumes(),
            bed.gcCountSince(mark),
            after / 1048576.0,
            before / 1048576.0);
        report.line("run %d product %s", run, CpuMeter.difference(cpuBefore, cpu.sample()));

        SandboxSpec spec =
            DockerRun.spec(scratch, "bench-t-" + run, "", 2, 4L << 30, 512, 2L << 30);
        List<String> command = new ArrayList<>(DockerRun.command(spec, false, "sh"));
        command.addAll(List.of("-c", numberedLines(lines)));
        LineCheck direct = new LineCheck();
        var directBefore = cpu.sample();
        long invoked = WallClock.micros();
        Process p =
            new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        try (BufferedReader out =
            new BufferedReader(
                new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8), 1 << 16)) {
          for (String line = out.readLine(); line != null; line = out.readLine()) {
            direct.accept(line, WallClock.micros());
          }
        }
        p.waitFor();
        DockerRun.remove("spb-job-" + spec.jobId());
        if (direct.seen() != lines || direct.bad != 0) {
          throw new IllegalStateException(
              "docker run gave " + direct.seen() + " lines, " + direct.bad + " wrong");
        }
        double directSeconds = (direct.lastMicros - direct.firstMicros) / 1e6;
        if (counted) {
          baseline.add(megabytes / directSeconds);
        } else {
          report.line("run %d above: warm-up, not counted", run);
        }
        report.line(
            "run %d docker run: first->last line %.2f s = %.1f MB/s; invocation->last line %.2f s",
            run, directSeconds, megabytes / directSeconds, (direct.lastMicros - invoked) / 1e6);
        report.line(
            "run %d docker run %s (the docker CLI and the container's shim are not counted)",
            run, CpuMeter.difference(directBefore, cpu.sample()));
      }
      double p = Stats.median(product);
      double b = Stats.median(baseline);
      report.line(
          "RESULT log throughput, median over %d runs of %.0f MB: websocket viewer %.1f MB/s, attached docker "
              + "run %.1f MB/s, ratio %.2fx (target >= 0.5): %s; no line lost or reordered; gateway heap max %.1f MiB "
              + "after GC, peak %.1f MiB",
          runs,
          megabytes,
          p,
          b,
          p / b,
          p / b >= 0.5 ? "MET" : "MISSED",
          heapAfter / 1048576.0,
          heapBefore / 1048576.0);
    }
  }
}
