package ai.spboucher.spbgit.benchmarks.system;

import ai.spboucher.spbgit.proto.CacheOutcome;
import ai.spboucher.spbgit.proto.JobEvent;
import ai.spboucher.spbgit.proto.JobStatus;
import ai.spboucher.spbgit.runner.JobCacheForBenchmarks;
import ai.spboucher.spbgit.runner.RunnerConfig;
import ai.spboucher.spbgit.runner.docker.WorkVolume;
import ai.spboucher.spbgit.testsupport.GitCli;
import ai.spboucher.spbgit.testsupport.WallClock;
import io.nats.client.Connection;
import io.nats.client.Nats;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * What a job environment costs before the agent can work: from the owner's {@code POST
 * .../agent-jobs} to the agent phase's start for the same exec job in three repositories, trials
 * interleaved (the order rotates each round) so all see the same load:
 *
 * <ul>
 *   <li><b>none</b>: no {@code .spbgit/agent.yml}, one container that clones and runs the command;
 *   <li><b>hit</b>: an environment whose cache the repository's first job kept: the cache restored
 *       (keyed by the gateway's digest of the key files, no clone container), the agent container,
 *       which clones;
 *   <li><b>miss</b>: the same environment in a repository with no cache yet (a fresh repository per
 *       trial): a clone container, the setup container (a script that sleeps {@code
 *       --setup-seconds} and writes {@code --cache-files} small files and a {@code --cache-blob-mb}
 *       file into {@code /work/deps}), the cache kept, the agent container.
 * </ul>
 *
 * Two ends are measured for each job: the engine's {@code start} event of the agent-phase container
 * (the job's only container without an environment), from {@code docker events}; and the
 * entrypoint's {@code running exec command} line as it reaches a NATS subscriber here, the moment
 * the command starts on a cloned (and, with an environment, set-up) {@code /work}. Without an
 * environment the clone runs inside the agent container, after its start; the second end counts it
 * for every variant alike.
 *
 * <p>Then restoring a {@code --restore-mb} cache (four big files and 10,000 4 KiB files) with the
 * runner's own {@code JobCache} into a fresh tmpfs, as a hit does, against GNU {@code tar -x} of
 * the same tar into the same kind of tmpfs; with the tar in the page cache (the usual case: it was
 * written or read recently) and dropped from it ({@code dd iflag=nocache}, this file only).
 *
 * <p>Options: {@code --rounds 8 --warmup 1 --setup-seconds 3 --cache-files 1000 --cache-blob-mb 16
 * --restore-mb 200 --restore-runs 5 --quiet-wait 600}.
 */
public final class EnvironmentBenchmark {

  private static final String RUNNER = "envbench";
  private static final String MARKER = "[spb-agent] running exec command";

  private enum Variant {
    NONE,
    HIT,
    MISS
  }

  private EnvironmentBenchmark() {}

  public static void main(String[] args) throws Exception {
    var options = Report.options(args);
    int rounds = Report.intOption(options, "rounds", 8);
    int warmup = Report.intOption(options, "warmup", 1);
    int setupSeconds = Report.intOption(options, "setup-seconds", 3);
    int cacheFiles = Report.intOption(options, "cache-files", 1000);
    int blobMb = Report.intOption(options, "cache-blob-mb", 16);
    int restoreMb = Report.intOption(options, "restore-mb", 200);
    int restoreRuns = Report.intOption(options, "restore-runs", 5);
    String agentYml =
        """
        setup: |
          mkdir -p /work/deps/pkg
          sleep %d
          i=0; while [ $i -lt %d ]; do echo "module $i" > /work/deps/pkg/m$i.py; i=$((i+1)); done
          head -c %d /dev/urandom > /work/deps/blob.bin
        cache:
          - /work/deps
        cache_key_files:
          - deps.lock
        test: test -s /work/deps/blob.bin && test -s /work/deps/pkg/m0.py
        """
            .formatted(setupSeconds, cacheFiles, blobMb << 20);
    try (Report report = new Report("environment", args);
        SystemBed bed = SystemBed.start("30m");
        ContainerEvents engine = ContainerEvents.follow(RUNNER);
        Connection nats = Nats.connect(bed.nats.url())) {
      Map<String, Long> markers = new ConcurrentHashMap<>();
      Map<String, CacheOutcome> outcomes = new ConcurrentHashMap<>();
      observe(nats, markers, outcomes);
      bed.startRunner(RUNNER, Map.of("SPB_CACHE_SIZE", "4g"));
      Map<String, String> envFiles =
          Map.of(".spbgit/agent.yml", agentYml, "deps.lock", "deps 1.0\n");
      createRepo(bed, "none", Map.of("deps.lock", "deps 1.0\n"));
      createRepo(bed, "hit", envFiles);
      for (int i = 0; i < warmup + rounds; i++) {
        createRepo(bed, "miss-" + i, envFiles);
      }
      report.line("agent.yml of hit and miss:\n" + agentYml.strip());
      Trial primer = trial(bed, engine, markers, outcomes, Variant.MISS, "hit");
      report.line("hit primed by a miss: POST->agent container start %.1f ms", primer.containerMs);
      report.line(
          "start load %.2f", Machine.awaitQuiet(1.5, Report.intOption(options, "quiet-wait", 600)));

      Map<Variant, List<Double>> container = new EnumMap<>(Variant.class);
      Map<Variant, List<Double>> command = new EnumMap<>(Variant.class);
      List<Double> restoreInJob = new ArrayList<>();
      List<Double> setupRun = new ArrayList<>();
      for (Variant v : Variant.values()) {
        container.put(v, new ArrayList<>());
        command.put(v, new ArrayList<>());
      }
      for (int round = -warmup; round < rounds; round++) {
        boolean keep = round >= 0;
        StringBuilder line = new StringBuilder("round " + round + ":");
        for (int k = 0; k < 3; k++) {
          Variant v = Variant.values()[Math.floorMod(round + k, 3)];
          String repo =
              switch (v) {
                case NONE -> "none";
                case HIT -> "hit";
                case MISS -> "miss-" + (round + warmup);
              };
          Trial t = trial(bed, engine, markers, outcomes, v, repo);
          line.append(
              String.format(
                  java.util.Locale.ROOT,
                  " %s container %.0f ms, command %.0f ms%s;",
                  v.name().toLowerCase(java.util.Locale.ROOT),
                  t.containerMs,
                  t.commandMs,
                  t.detail));
          if (keep) {
            container.get(v).add(t.containerMs);
            command.get(v).add(t.commandMs);
            if (v == Variant.HIT) {
              restoreInJob.add(t.phaseMs);
            } else if (v == Variant.MISS) {
              setupRun.add(t.phaseMs);
            }
          }
          Thread.sleep(500);
        }
        report.line(line + (keep ? "" : " (warm-up, not counted)"));
      }
      for (Variant v : Variant.values()) {
        report.line(
            "%-4s POST->agent container start: %s",
            v.name().toLowerCase(java.util.Locale.ROOT), Stats.of(container.get(v)).describe("ms"));
        report.line(
            "%-4s POST->command start:         %s",
            v.name().toLowerCase(java.util.Locale.ROOT), Stats.of(command.get(v)).describe("ms"));
      }
      report.line(
          "hit: POST -> agent container created (queue, admission, key + restore): %s",
          Stats.of(restoreInJob).describe("ms"));
      report.line("miss: setup container start -> exit: %s", Stats.of(setupRun).describe("ms"));
      verdicts(report, container, command, Stats.of(setupRun).p50(), Stats.of(restoreInJob).p50());

      restoreBenchmark(report, bed.dir, restoreMb, restoreRuns);
    }
  }

  private static void verdicts(
      Report report,
      Map<Variant, List<Double>> container,
      Map<Variant, List<Double>> command,
      double setupP50,
      double restoreP50) {
    for (var entry :
        List.of(
            Map.entry("agent container start", container), Map.entry("command start", command))) {
      double none = Stats.of(entry.getValue().get(Variant.NONE)).p50();
      double hit = Stats.of(entry.getValue().get(Variant.HIT)).p50();
      double miss = Stats.of(entry.getValue().get(Variant.MISS)).p50();
      report.line(
          "RESULT environment %s: p50 hit %.0f ms vs none %.0f ms: ratio %.2fx (target <= 1.3): %s; "
              + "miss %.0f ms: the hit saves %.0f ms of the setup phase's %.0f ms (POST -> agent "
              + "container created in the hit %.0f ms)",
          entry.getKey(),
          hit,
          none,
          hit / none,
          hit / none <= 1.3 ? "MET" : "MISSED",
          miss,
          miss - hit,
          setupP50,
          restoreP50);
    }
  }

  /** One job and what it took; {@code phaseMs} is the hit's restore or the miss's setup run. */
  private record Trial(double containerMs, double commandMs, double phaseMs, String detail) {}

  private static Trial trial(
      SystemBed bed,
      ContainerEvents engine,
      Map<String, Long> markers,
      Map<String, CacheOutcome> outcomes,
      Variant variant,
      String repo)
      throws Exception {
    SystemBed.Submitted job = bed.submit(repo, "true");
    String exit = bed.awaitFinished(job.id(), Duration.ofMinutes(3));
    if (!"ok".equals(exit)) {
      throw new IllegalStateException(
          "job " + job.id() + " of " + repo + " ended " + exit + "\n" + bed.runnerLogs());
    }
    CacheOutcome expected =
        switch (variant) {
          case NONE -> CacheOutcome.CACHE_NONE;
          case HIT -> CacheOutcome.CACHE_HIT;
          case MISS -> CacheOutcome.CACHE_MISS;
        };
    if (outcomes.get(job.id()) != expected) {
      throw new IllegalStateException(
          "job "
              + job.id()
              + " of "
              + repo
              + ": cache "
              + outcomes.get(job.id())
              + ", not "
              + expected);
    }
    Duration wait = Duration.ofSeconds(10);
    String name = "spb-job-" + job.id();
    double containerMs = (engine.await(name, "start", wait) - job.sentMicros()) / 1000.0;
    Long marker = markers.get(job.id());
    if (marker == null) {
      throw new IllegalStateException("job " + job.id() + ": no '" + MARKER + "' line seen");
    }
    double commandMs = (marker - job.sentMicros()) / 1000.0;
    double phaseMs = Double.NaN;
    String detail = "";
    if (variant == Variant.HIT) {
      // No clone container: the runner restores as soon as it has the job, then creates the
      // agent's.
      phaseMs = (engine.await(name, "create", wait) - job.sentMicros()) / 1000.0;
      detail = String.format(java.util.Locale.ROOT, " (created after %.0f ms)", phaseMs);
    } else if (variant == Variant.MISS) {
      phaseMs =
          (engine.await(name + "-setup", "die", wait)
                  - engine.await(name + "-setup", "start", wait))
              / 1000.0;
      detail = String.format(java.util.Locale.ROOT, " (setup ran %.0f ms)", phaseMs);
    }
    return new Trial(containerMs, commandMs, phaseMs, detail);
  }

  /**
   * Stamps the entrypoint's exec line of each job as it passes, and records each STARTED's cache
   * outcome.
   */
  private static void observe(
      Connection nats, Map<String, Long> markers, Map<String, CacheOutcome> outcomes)
      throws Exception {
    nats.createDispatcher(
            m -> {
              long now = WallClock.micros();
              try {
                JobEvent event = JobEvent.parseFrom(m.getData());
                if (event.hasLog()
                    && event.getLog().getData().toString(StandardCharsets.UTF_8).contains(MARKER)) {
                  markers.putIfAbsent(event.getJobId(), now);
                } else if (event.hasStatus()
                    && event.getStatus().getStatus() == JobStatus.STARTED) {
                  outcomes.put(event.getJobId(), event.getStatus().getCache());
                }
              } catch (com.google.protobuf.InvalidProtocolBufferException e) {
                System.err.println("unreadable event: " + e.getMessage());
              }
            })
        .subscribe("spb.events.*.>");
    nats.flush(Duration.ofSeconds(5));
  }

  /** Creates {@code repo} with {@code files} on main, pushed with the owner token. */
  private static void createRepo(SystemBed bed, String repo, Map<String, String> files)
      throws Exception {
    var r = bed.api("POST", "/api/v1/repos", new JsonObject().put("name", repo).encode());
    if (r.statusCode() != 201) {
      throw new IOException("cannot create " + repo + ": " + r.statusCode() + " " + r.body());
    }
    GitCli git = new GitCli(Files.createDirectories(bed.dir.resolve("home")));
    Path work = Files.createDirectories(bed.dir.resolve("seed-" + repo));
    git.ok(work, "init", "-q", "-b", "main");
    for (var file : files.entrySet()) {
      Path path = work.resolve(file.getKey());
      Files.createDirectories(path.getParent());
      Files.writeString(path, file.getValue());
    }
    git.ok(work, "add", ".");
    git.ok(work, "commit", "-q", "-m", "seed");
    git.ok(
        work,
        "push",
        "-q",
        bed.baseUrl.replace("http://", "http://owner:" + bed.ownerToken + "@")
            + "/"
            + repo
            + ".git",
        "main");
  }

  /**
   * Restores a {@code mb} MB cache with the runner's {@code JobCache} into a fresh tmpfs {@code
   * runs} times, warm and cold, interleaved with GNU tar extracting the same tar.
   */
  private static void restoreBenchmark(Report report, Path dir, int mb, int runs) throws Exception {
    Path source = Files.createDirectories(dir.resolve("restore-source/work"));
    long bytes = writeCacheTree(source.resolve("cache"), mb);
    List<String> paths = List.of("/work/cache");
    JobCacheForBenchmarks cache = new JobCacheForBenchmarks(dir.resolve("restore-cache"), 1L << 40);
    String key = JobCacheForBenchmarks.key("restore", "setup", paths);
    long t0 = System.nanoTime();
    long tarBytes = cache.keep("restore", key, paths, source);
    double keepMs = (System.nanoTime() - t0) / 1e6;
    Path tar;
    try (Stream<Path> walk = Files.walk(dir.resolve("restore-cache"))) {
      tar = walk.filter(p -> p.toString().endsWith(".tar")).findFirst().orElseThrow();
    }
    report.line(
        "restore: %d MB of content (%d bytes, 4 big files + 10,000 small ones), tar %d bytes, kept "
            + "in %.0f ms",
        mb, bytes, tarBytes, keepMs);
    Map<String, List<Double>> times = new java.util.LinkedHashMap<>();
    int uid = RunnerConfig.DEFAULT_SANDBOX_UID;
    for (int run = 0; run < runs; run++) {
      for (boolean cold : new boolean[] {false, true}) {
        for (boolean ours : new boolean[] {true, false}) {
          WorkVolume volume =
              new WorkVolume(dir.resolve("restore-" + run + "/work"), 2L * bytes + (64 << 20), uid);
          if (!volume.mount()) {
            throw new IllegalStateException("cannot mount a tmpfs: run as root");
          }
          try {
            if (cold) {
              dropFromPageCache(tar);
            }
            long start = System.nanoTime();
            if (ours) {
              if (!cache.restore("restore", key, paths, volume.dir(), uid)) {
                throw new IllegalStateException("nothing restored");
              }
            } else {
              run(
                  "tar",
                  "-x",
                  "--strip-components=1",
                  "-f",
                  tar.toString(),
                  "-C",
                  volume.dir().toString());
            }
            double ms = (System.nanoTime() - start) / 1e6;
            long restored = size(volume.dir().resolve("cache"));
            if (restored != bytes) {
              throw new IllegalStateException("restored " + restored + " of " + bytes + " bytes");
            }
            String what = (ours ? "JobCache.restore" : "tar -x") + (cold ? " cold" : " warm");
            times.computeIfAbsent(what, k -> new ArrayList<>()).add(ms);
            report.line("restore run %d %s: %.0f ms", run, what, ms);
          } finally {
            volume.release();
          }
        }
      }
    }
    times.forEach((what, ms) -> report.line("%-22s %s", what + ":", Stats.of(ms).describe("ms")));
    double warm = Stats.of(times.get("JobCache.restore warm")).p50();
    double cold = Stats.of(times.get("JobCache.restore cold")).p50();
    report.line(
        "RESULT environment restore %d MB: p50 warm %.0f ms, cold %.0f ms (target <= 2000): %s; "
            + "tar -x warm %.0f ms, cold %.0f ms",
        mb,
        warm,
        cold,
        Math.max(warm, cold) <= 2000 ? "MET" : "MISSED",
        Stats.of(times.get("tar -x warm")).p50(),
        Stats.of(times.get("tar -x cold")).p50());
  }

  /** Four big files (80% of the bytes) and 10,000 4 KiB files in 100 directories; total bytes. */
  private static long writeCacheTree(Path top, int mb) throws IOException {
    long total = (long) mb << 20;
    long small = 10_000L * 4096;
    long big = (total - small) / 4;
    Random random = new Random(14);
    byte[] block = new byte[1 << 20];
    for (int i = 0; i < 4; i++) {
      Files.createDirectories(top.resolve("lib"));
      try (OutputStream out = Files.newOutputStream(top.resolve("lib/big-" + i + ".so"))) {
        for (long left = big; left > 0; left -= block.length) {
          random.nextBytes(block);
          out.write(block, 0, (int) Math.min(block.length, left));
        }
      }
    }
    byte[] page = new byte[4096];
    for (int d = 0; d < 100; d++) {
      Path sub = Files.createDirectories(top.resolve("site-packages/pkg" + d));
      for (int f = 0; f < 100; f++) {
        random.nextBytes(page);
        Files.write(sub.resolve("mod" + f + ".py"), page);
      }
    }
    return size(top);
  }

  private static long size(Path top) throws IOException {
    try (Stream<Path> walk = Files.walk(top)) {
      return walk.filter(Files::isRegularFile).mapToLong(p -> p.toFile().length()).sum();
    }
  }

  /** Drops one file's pages from the page cache (written back first), nothing else's. */
  private static void dropFromPageCache(Path file) throws Exception {
    run("sync", file.toString());
    run("dd", "if=" + file, "iflag=nocache", "count=0", "status=none");
  }

  private static void run(String... command) throws Exception {
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (!p.waitFor(5, TimeUnit.MINUTES) || p.exitValue() != 0) {
      throw new IllegalStateException(String.join(" ", command) + " failed: " + out);
    }
  }
}
