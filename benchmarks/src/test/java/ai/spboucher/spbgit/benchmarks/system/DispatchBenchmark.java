package ai.spboucher.spbgit.benchmarks.system;

import ai.spboucher.spbgit.runner.docker.SandboxSpec;
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
 * Dispatch latency: from the owner's {@code POST .../agent-jobs} to the job's container running,
 * against {@code docker run} of the same image with the same flags, measured in the same run,
 * trials interleaved so both see the same load.
 *
 * <ul>
 *   <li>"running" is the runner's {@code STARTED} event (published once {@code docker start} has
 *       returned), as stamped by a core-NATS subscriber here; its baseline is {@code docker run -d}
 *       returning (the CLI returns once the container is started).
 *   <li>"first output" is the first chunk of the container's own output on NATS (the image's
 *       entrypoint prints one line first thing); its baseline is the first line on the stdout of an
 *       attached {@code docker run}.
 * </ul>
 *
 * <p>Options: {@code --runs 3 --rounds 10 --warmup 2 --quiet-wait 600} (seconds to wait for a load
 * below 1.5). One runner, one slot, the production default limits.
 */
public final class DispatchBenchmark {

  private DispatchBenchmark() {}

  public static void main(String[] args) throws Exception {
    var options = Report.options(args);
    int runs = Report.intOption(options, "runs", 3);
    int rounds = Report.intOption(options, "rounds", 10);
    int warmup = Report.intOption(options, "warmup", 2);
    try (Report report = new Report("dispatch", args);
        SystemBed bed = SystemBed.start("30m")) {
      bed.startRunner("sysbench", Map.of());
      bed.createRepo("bench");
      bed.observeFirstOutput();
      Path scratch = Files.createDirectories(bed.dir.resolve("baseline"));
      report.line(
          "start load %.2f", Machine.awaitQuiet(1.5, Report.intOption(options, "quiet-wait", 600)));

      List<Double> started = new ArrayList<>();
      List<Double> firstOutput = new ArrayList<>();
      List<Double> answered = new ArrayList<>();
      List<Double> dockerRunD = new ArrayList<>();
      List<Double> dockerRunFirst = new ArrayList<>();
      List<Double> runP50Overhead = new ArrayList<>();
      List<Double> runP50Ratio = new ArrayList<>();
      int trial = 0;
      for (int run = 1; run <= runs; run++) {
        List<Double> runStarted = new ArrayList<>();
        List<Double> runDocker = new ArrayList<>();
        for (int round = -warmup; round < rounds; round++) {
          boolean keep = round >= 0;
          var job = bed.submit("bench", "true");
          var times = bed.times(job.id());
          times.startedSeen.get(120, TimeUnit.SECONDS);
          String exit = bed.awaitFinished(job.id(), Duration.ofMinutes(2));
          if (!"ok".equals(exit)) {
            throw new IllegalStateException("job " + job.id() + " ended " + exit);
          }
          double tStarted = (times.started - job.sentMicros()) / 1000.0;
          double tFirst =
              times.firstOutput == 0 ? Double.NaN : (times.firstOutput - job.sentMicros()) / 1000.0;
          double tAnswered = (job.answeredMicros() - job.sentMicros()) / 1000.0;
          settle();

          SandboxSpec spec =
              DockerRun.spec(scratch, "bench-d-" + trial, "true", 2, 4L << 30, 512, 2L << 30);
          double tDocker = dockerRunDetached(spec);
          settle();
          SandboxSpec attached =
              DockerRun.spec(scratch, "bench-a-" + trial, "true", 2, 4L << 30, 512, 2L << 30);
          double tDockerFirst = dockerRunFirstLine(attached);
          trial++;
          report.line(
              "run %d round %d: POST->201 %.1f ms, POST->STARTED %.1f ms, POST->first output %.1f ms | "
                  + "docker run -d %.1f ms, docker run->first line %.1f ms%s",
              run,
              round,
              tAnswered,
              tStarted,
              tFirst,
              tDocker,
              tDockerFirst,
              keep ? "" : " (warm-up, not counted)");
          if (keep) {
            started.add(tStarted);
            firstOutput.add(tFirst);
            answered.add(tAnswered);
            dockerRunD.add(tDocker);
            dockerRunFirst.add(tDockerFirst);
            runStarted.add(tStarted);
            runDocker.add(tDocker);
          }
          settle();
        }
        double p50 = Stats.of(runStarted).p50();
        double base = Stats.of(runDocker).p50();
        runP50Overhead.add(p50 - base);
        runP50Ratio.add(p50 / base);
        report.line(
            "run %d: p50 POST->STARTED %.1f ms, p50 docker run -d %.1f ms, overhead %.1f ms, ratio %.2f",
            run, p50, base, p50 - base, p50 / base);
      }
      Stats s = Stats.of(started);
      Stats d = Stats.of(dockerRunD);
      Stats f = Stats.of(firstOutput);
      Stats df = Stats.of(dockerRunFirst);
      report.line("POST->201:                %s", Stats.of(answered).describe("ms"));
      report.line("POST->STARTED:            %s", s.describe("ms"));
      report.line("docker run -d:            %s", d.describe("ms"));
      report.line("POST->first output:       %s", f.describe("ms"));
      report.line("docker run->first line:   %s", df.describe("ms"));
      double overhead = Stats.median(runP50Overhead);
      double ratio = Stats.median(runP50Ratio);
      report.line(
          "RESULT dispatch running: p50 %.1f ms vs docker run -d p50 %.1f ms; median over %d runs of the "
              + "p50 overhead %.1f ms (target <= 150) and ratio %.2fx (target <= 1.3): %s",
          s.p50(),
          d.p50(),
          runs,
          overhead,
          ratio,
          overhead <= 150 && ratio <= 1.3 ? "MET" : "MISSED");
      report.line(
          "RESULT dispatch first output: p50 %.1f ms vs docker run p50 %.1f ms: overhead %.1f ms, ratio "
              + "%.2fx",
          f.p50(), df.p50(), f.p50() - df.p50(), f.p50() / df.p50());
    }
  }

  /** Wall time of {@code docker run -d}, which returns once the container has started. */
  private static double dockerRunDetached(SandboxSpec spec) throws Exception {
    List<String> command = DockerRun.command(spec, true, null);
    long t0 = System.nanoTime();
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    int code = p.waitFor();
    double ms = (System.nanoTime() - t0) / 1e6;
    if (code != 0) {
      throw new IllegalStateException("docker run -d failed: " + out);
    }
    awaitExit("spb-job-" + spec.jobId());
    DockerRun.remove("spb-job-" + spec.jobId());
    return ms;
  }

  /**
   * Time from invoking an attached {@code docker run} to the first line of the container's output.
   */
  private static double dockerRunFirstLine(SandboxSpec spec) throws Exception {
    List<String> command = DockerRun.command(spec, false, null);
    long t0 = System.nanoTime();
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    double ms;
    try (BufferedReader out =
        new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
      String first = out.readLine();
      ms = (System.nanoTime() - t0) / 1e6;
      if (first == null || !first.startsWith("[spb-agent]")) {
        throw new IllegalStateException("unexpected first line from docker run: " + first);
      }
      out.transferTo(java.io.Writer.nullWriter());
    }
    p.waitFor();
    DockerRun.remove("spb-job-" + spec.jobId());
    return ms;
  }

  private static void awaitExit(String name) throws Exception {
    new ProcessBuilder("docker", "wait", name)
        .redirectErrorStream(true)
        .redirectOutput(ProcessBuilder.Redirect.DISCARD)
        .start()
        .waitFor(60, TimeUnit.SECONDS);
  }

  /**
   * A pause between trials, so one trial's clean-up (container removal, unmounts) does not land in
   * the next.
   */
  private static void settle() throws InterruptedException {
    Thread.sleep(500);
  }
}
