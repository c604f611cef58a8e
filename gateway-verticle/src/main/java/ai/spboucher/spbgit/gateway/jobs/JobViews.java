package ai.spboucher.spbgit.gateway.jobs;

import ai.spboucher.spbgit.gateway.errors.RequestException;
import ai.spboucher.spbgit.gateway.repos.RepoName;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Jobs in their API form ({@link Job#toJson}), with where their proposal and partial refs point
 * now.
 *
 * <p>Threading: call on any context; the refs are read (JGit) on a worker thread and the futures
 * complete on the calling context.
 */
public record JobViews(Vertx vertx, Proposals proposals) {

  /** Jobs of one repository (one repository read for all of them). */
  public Future<List<JsonObject>> of(RepoName repo, List<Job> jobs) {
    return vertx
        .executeBlocking(() -> proposals.workShas(repo, jobs), false)
        .map(shas -> render(jobs, shas));
  }

  /**
   * Jobs across repositories (one read per repository); a deleted repository's jobs show no work.
   */
  public Future<List<JsonObject>> acrossRepos(List<Job> jobs) {
    Map<String, List<Job>> byRepo = new LinkedHashMap<>();
    jobs.forEach(j -> byRepo.computeIfAbsent(j.repo(), r -> new ArrayList<>()).add(j));
    return vertx.executeBlocking(
        () -> {
          Map<String, WorkShas> shas = new HashMap<>();
          for (var entry : byRepo.entrySet()) {
            try {
              shas.putAll(proposals.workShas(RepoName.of(entry.getKey()), entry.getValue()));
            } catch (RequestException.NotFound e) {
              // The repository was deleted; its jobs stay in the audit log without proposals.
            }
          }
          return render(jobs, shas);
        },
        false);
  }

  public Future<JsonObject> of(Job job) {
    return of(RepoName.of(job.repo()), List.of(job)).map(list -> list.get(0));
  }

  private static List<JsonObject> render(List<Job> jobs, Map<String, WorkShas> shas) {
    return jobs.stream().map(j -> j.toJson(shas.getOrDefault(j.id(), WorkShas.NONE))).toList();
  }
}
