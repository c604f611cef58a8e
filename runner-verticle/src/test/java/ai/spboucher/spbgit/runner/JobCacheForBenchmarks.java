package ai.spboucher.spbgit.runner;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * The package-private {@link JobCache} as the system benchmarks (the {@code benchmarks} module)
 * drive it: the same keep and restore a job's setup phase and cache hit run, on directories the
 * benchmark chooses.
 *
 * <p>Threading: as {@link JobCache}: every method blocks.
 */
public final class JobCacheForBenchmarks {

  private final JobCache cache;

  public JobCacheForBenchmarks(Path root, long limitBytes) {
    this.cache = new JobCache(root, limitBytes);
  }

  /** The key a job of {@code repo} with this setup and no key files gets. */
  public static String key(String repo, String setup, List<String> cachePaths) {
    return JobCache.key(repo, "sha256:bench", setup, cachePaths, Map.of());
  }

  /** Keeps {@code cachePaths} of {@code workDir}; the tar's size, or -1 when not kept. */
  public long keep(String repo, String key, List<String> cachePaths, Path workDir)
      throws IOException {
    CacheKept kept = cache.keep(repo, key, cachePaths, workDir, new CacheProducer("benchmark", ""));
    return kept.kept() ? kept.bytes() : -1;
  }

  /** Restores into {@code workDir} owned by {@code uid}; false when nothing is kept. */
  public boolean restore(String repo, String key, List<String> cachePaths, Path workDir, int uid)
      throws IOException {
    return cache.restore(repo, key, cachePaths, workDir, uid).isPresent();
  }
}
