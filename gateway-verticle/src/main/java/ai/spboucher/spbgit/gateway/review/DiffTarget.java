package ai.spboucher.spbgit.gateway.review;

import ai.spboucher.spbgit.gateway.repos.RepoName;
import java.util.List;

/**
 * What a job's diff compares: its work ({@code head}, at {@code ref}) against the commit it started
 * from ({@code base}, null for a root commit). A diff is a function of these alone, which makes
 * them its cache key.
 *
 * @param kind {@code proposal} or {@code partial}, as the API labels it
 * @param scope what {@code base} is, as the API labels it ({@link DiffScope})
 * @param descendsFromBase whether {@code head} has {@code base} in its history: always for a base
 *     that is a merge base; a revision whose agent rewrote history does not
 * @param cacheKeyFiles the job environment's {@code cache_key_files}: the diff says which of them
 *     the work changes (their dependencies take effect for jobs only once the owner approves)
 */
public record DiffTarget(
    RepoName repo,
    String ref,
    String kind,
    String base,
    String head,
    String scope,
    boolean descendsFromBase,
    List<String> cacheKeyFiles) {

  public DiffTarget {
    cacheKeyFiles = List.copyOf(cacheKeyFiles);
  }

  String cacheKey() {
    return repo.value() + ' ' + ref + ' ' + scope + ' ' + base + ' ' + head + ' ' + cacheKeyFiles;
  }
}
