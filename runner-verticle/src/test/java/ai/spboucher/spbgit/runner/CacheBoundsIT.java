package ai.spboucher.spbgit.runner;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.spboucher.spbgit.proto.CacheOutcome;
import ai.spboucher.spbgit.proto.Environment;
import ai.spboucher.spbgit.proto.JobEvent;
import ai.spboucher.spbgit.proto.JobRequest;
import ai.spboucher.spbgit.proto.JobStatus;
import ai.spboucher.spbgit.proto.Mode;
import ai.spboucher.spbgit.proto.StatusChange;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The setup cache's bounds through a real gateway, NATS, runner and Docker: a setup that leaves a 1
 * GiB sparse file and fifty hard links to a 10 MiB file (10 MiB of {@code /work}) once had the
 * runner write a 1.6 GB tar; now the tar is counted first, nothing is written, the job ends ok and
 * its log says by how much it missed. Fifty hard links to a 2 MiB file are kept as one file and
 * restored as links (stored as fifty copies they would not have fit).
 *
 * <p>The runner keeps at most 64 MiB of caches, 32 MiB per tar ({@code SPB_CACHE_ENTRY_SIZE}'s
 * default, half).
 */
class CacheBoundsIT {

  private static final String RUNNER = "bounds";
  private static final long ENTRY_LIMIT = 32L << 20;

  /** The producer record: its header and its JSON, one record. */
  private static final long PRODUCER_RECORD = 512 + 512;

  /** The two zero records that end a tar. */
  private static final long END = 1024;

  @TempDir static Path tmp;
  static JobTestBed bed;

  @BeforeAll
  static void startBed() throws Exception {
    JobTestBed.requireDocker();
    bed = JobTestBed.start(tmp, "10m");
    bed.startRunner(RUNNER, Map.of("SPB_LIMIT_DISK", "64m", "SPB_CACHE_SIZE", "64m"));
  }

  @AfterAll
  static void stopBed() throws Exception {
    if (bed != null) {
      bed.close();
    }
  }

  @Test
  void aSparseFileAndFiftyHardLinksAreCountedNotWrittenAndTheJobEndsOk() throws Exception {
    bed.createRepo("amp", Map.of("README.md", "hi\n"));
    Environment environment =
        Environment.newBuilder()
            .setImage("base")
            .setSetup(
                "mkdir -p /work/amp && truncate -s 1G /work/amp/sparse"
                    + " && head -c 10485760 /dev/urandom > /work/amp/data"
                    + " && for i in $(seq 1 50); do ln /work/amp/data /work/amp/link$i; done"
                    + " && echo \"setup used $(du -sk /work/amp | cut -f1) KiB\"")
            .addCache("/work/amp")
            .build();
    StatusChange done;
    long highWater;
    try (HighWater cacheDir = new HighWater("amp")) {
      bed.publish(exec("amp", "cache-amp", "true", environment).build());
      done = bed.awaitFinishedEvent("cache-amp", Duration.ofMinutes(4));
      highWater = cacheDir.max();
    }
    String log = bed.log("cache-amp");
    assertEquals(0, highWater, "nothing was ever written to the cache directory\n" + log);
    assertEquals(List.of(), cacheFiles("amp"), "no tar kept, no temporary file left");
    assertEquals("ok", done.getExitReason(), done + "\n" + log);
    assertTrue(log.contains("[spb-runner] setup phase starting"), log);
    assertTrue(log.contains("[spb-runner] agent phase starting"), log);
    java.util.regex.Matcher used =
        java.util.regex.Pattern.compile("setup used (\\d+) KiB").matcher(log);
    assertTrue(used.find(), log);
    assertTrue(Long.parseLong(used.group(1)) < 12 << 10, "about 10 MiB of /work: " + used.group());
    // The tar: the producer record; the directory, the sparse file and the file with its data once
    // (53 headers); the end.
    long counted = PRODUCER_RECORD + 53 * 512 + (1L << 30) + (10L << 20) + END;
    assertTrue(
        log.contains("not cached: " + (counted - ENTRY_LIMIT) + " bytes over the limit"), log);
    assertEquals(CacheOutcome.CACHE_MISS, started("cache-amp").getCache());
  }

  @Test
  void fiftyHardLinksAreKeptAsOneFileAndRestoredAsLinks() throws Exception {
    bed.createRepo("links", Map.of("README.md", "hi\n"));
    String base = bed.git.ok(tmp.resolve("seed-links"), "rev-parse", "HEAD").output().strip();
    Environment environment =
        Environment.newBuilder()
            .setImage("base")
            .setSetup(
                "mkdir -p /work/links && head -c 2097152 /dev/urandom > /work/links/data"
                    + " && for i in $(seq 1 50); do ln /work/links/data /work/links/link$i; done")
            .addCache("/work/links")
            .build();
    long highWater;
    try (HighWater cacheDir = new HighWater("links")) {
      bed.publish(
          exec("links", "cache-links-1", "true", environment)
              .setBaseSha(base)
              .setSetupSha(base)
              .build());
      StatusChange kept = bed.awaitFinishedEvent("cache-links-1", Duration.ofMinutes(4));
      String log = bed.log("cache-links-1");
      assertEquals("ok", kept.getExitReason(), kept + "\n" + log);
      // The directory and the file once (52 headers), not 51 copies of 2 MiB (over the bound).
      long size = PRODUCER_RECORD + 52 * 512 + (2L << 20) + END;
      assertTrue(log.contains(" kept (" + size + " bytes)"), log);
      highWater = cacheDir.max();
      assertTrue(highWater <= ENTRY_LIMIT, highWater + " bytes in the cache directory");
    }
    List<Path> tars = cacheFiles("links");
    assertEquals(1, tars.size(), tars.toString());
    assertTrue(tars.get(0).toString().endsWith(".tar"), tars.toString());
    assertEquals(
        new CacheProducer("cache-links-1", base),
        CacheArchive.producer(tars.get(0)),
        "the tar names the job that made it and the commit its setup ran on");

    String probe =
        "echo \"nlink=$(stat -c %h /work/links/data)"
            + " same=$(test $(stat -c %i /work/links/data) = $(stat -c %i /work/links/link37)"
            + " && echo yes)\"";
    bed.publish(exec("links", "cache-links-2", probe, environment).build());
    StatusChange hit = bed.awaitFinishedEvent("cache-links-2", Duration.ofMinutes(4));
    String log = bed.log("cache-links-2");
    assertEquals("ok", hit.getExitReason(), hit + "\n" + log);
    assertTrue(log.contains("[spb-runner] cache hit "), log);
    assertFalse(log.contains("setup phase starting"), log);
    assertTrue(log.contains("nlink=51 same=yes"), log);
  }

  private static JobRequest.Builder exec(
      String repo, String id, String exec, Environment environment) throws Exception {
    return bed.request(repo, id, Mode.MODE_EXEC, "cache bounds", 180)
        .setExecCommand(exec)
        .setEnvironment(environment);
  }

  /** The runner's setup caches, {@code SPB_RUNNER_WORK_DIR/cache}. */
  private static Path cacheRoot() {
    return Path.of(bed.runnerEnv(RUNNER).get("SPB_RUNNER_WORK_DIR")).resolve("cache");
  }

  /** The files the runner's cache holds for {@code repo}, tars and temporary files alike. */
  private static List<Path> cacheFiles(String repo) throws IOException {
    Path root = cacheRoot();
    if (!Files.exists(root)) {
      return List.of();
    }
    try (Stream<Path> walk = Files.walk(root)) {
      return walk.filter(Files::isRegularFile)
          .filter(f -> root.relativize(f).getName(0).toString().startsWith(repo + "-"))
          .toList();
    }
  }

  private static StatusChange started(String jobId) throws Exception {
    return bed.statusEvents(jobId).stream()
        .map(JobEvent::getStatus)
        .filter(s -> s.getStatus() == JobStatus.STARTED)
        .findFirst()
        .orElseThrow();
  }

  /**
   * The most bytes the runner's cache held at once for a repository, sampled every 20 ms by a
   * thread of its own until closed: a tar being written, temporary or kept, shows.
   */
  private static final class HighWater implements AutoCloseable {
    private final String repo;
    private final AtomicLong max = new AtomicLong();
    private final Thread sampler;
    private volatile boolean running = true;

    HighWater(String repo) {
      this.repo = repo;
      sampler =
          new Thread(
              () -> {
                while (running) {
                  max.accumulateAndGet(bytes(), Math::max);
                  try {
                    Thread.sleep(20);
                  } catch (InterruptedException e) {
                    return;
                  }
                }
              },
              "cache-high-water");
      sampler.setDaemon(true);
      sampler.start();
    }

    long max() {
      return max.get();
    }

    private long bytes() {
      long total = 0;
      try {
        for (Path file : cacheFiles(repo)) {
          try {
            total += Files.size(file);
          } catch (IOException gone) {
            // Renamed or deleted between the listing and the size: the next sample sees it.
          }
        }
      } catch (IOException | UncheckedIOException e) {
        // A directory went while it was walked: the next sample sees what replaced it.
      }
      return total;
    }

    @Override
    public void close() throws InterruptedException {
      running = false;
      sampler.join();
      max.accumulateAndGet(bytes(), Math::max);
    }
  }
}
