package ai.spboucher.spbgit.gateway.review;

import ai.spboucher.spbgit.gateway.jobs.Job;
import ai.spboucher.spbgit.gateway.jobs.WorkRef;
import ai.spboucher.spbgit.gateway.repos.RepoName;
import ai.spboucher.spbgit.gateway.repos.RepositoryStore;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import java.util.stream.Collectors;

/**
 * Serves jobs' diffs: each pair of commits is diffed once, within a {@link DiffBudget}, and then
 * answered from a {@link DiffCache}; views that arrive while it is being computed wait for that
 * computation, and a computation every waiting client went away from is cancelled. Metrics: {@code
 * spb_diff_computations_total{outcome}} ({@code complete}, {@code too_large}, {@code cancelled},
 * {@code failed}), {@code spb_diff_cache_hits_total} and {@code spb_diff_computations_running}.
 *
 * <p>Threading: call {@link #diff} on the gateway's context; the computations run on the worker
 * pool and report back on the context, so the table of running computations is only touched there.
 */
public final class ProposalDiffs {

  private static final System.Logger LOG = System.getLogger(ProposalDiffs.class.getName());

  /**
   * About 32 MB of encoded diffs: some twenty of the largest the line budget allows, thousands of
   * usual ones.
   */
  static final long CACHE_CHARS = 32L << 20;

  static final int CACHE_ENTRIES = 1_000;
  private static final List<String> OUTCOMES =
      List.of("complete", "too_large", "cancelled", "failed");

  private final Vertx vertx;
  private final DiffTargets targets;
  private final FileDiffs files;
  private final DiffBudget budget;
  private final DiffCache cache = new DiffCache(CACHE_CHARS, CACHE_ENTRIES);
  private final Map<String, Computation> running = new HashMap<>();
  private final AtomicInteger runningCount = new AtomicInteger();
  private final Map<String, Counter> computations;
  private final Counter cacheHits;

  public ProposalDiffs(
      Vertx vertx, RepositoryStore repos, DiffBudget budget, MeterRegistry registry) {
    this.vertx = vertx;
    this.targets = new DiffTargets(repos);
    this.files = new FileDiffs(repos);
    this.budget = budget;
    computations =
        OUTCOMES.stream()
            .collect(
                Collectors.toMap(
                    Function.identity(),
                    outcome ->
                        Counter.builder("spb_diff_computations_total")
                            .description("Proposal diffs computed, by how they ended")
                            .tag("outcome", outcome)
                            .register(registry)));
    cacheHits =
        Counter.builder("spb_diff_cache_hits_total")
            .description("Proposal diff views answered from the cache of computed diffs")
            .register(registry);
    Gauge.builder("spb_diff_computations_running", runningCount, AtomicInteger::get)
        .description("Proposal diffs being computed now")
        .register(registry);
  }

  /**
   * The diff of the job's work as encoded JSON (see {@link FileDiffs#diff}). {@code clientGone}
   * completes when the client that asked went away; when every client waiting for a computation
   * has, it stops, and is not cached.
   */
  public Future<String> diff(Job job, WorkRef which, Future<Void> clientGone) {
    return diff(job, which, DiffScope.CUMULATIVE, clientGone);
  }

  /** The diff of the job's work in {@code scope}: for a revision, cumulative or its own. */
  public Future<String> diff(Job job, WorkRef which, DiffScope scope, Future<Void> clientGone) {
    return vertx
        .executeBlocking(() -> targets.of(RepoName.of(job.repo()), job, which, scope), false)
        .compose(target -> answer(target, clientGone));
  }

  private Future<String> answer(DiffTarget target, Future<Void> clientGone) {
    String key = target.cacheKey();
    String cached = cache.get(key);
    if (cached != null) {
      cacheHits.increment();
      return Future.succeededFuture(cached);
    }
    Computation computation = running.get(key);
    if (computation == null || computation.allowance.cancelled()) {
      computation = start(key, target);
    }
    Computation joined = computation;
    joined.waiters++;
    clientGone.onComplete(gone -> joined.leave(target));
    return joined.result;
  }

  private Computation start(String key, DiffTarget target) {
    Computation computation = new Computation(new DiffAllowance(budget.time()));
    running.put(key, computation);
    runningCount.incrementAndGet();
    // JGit reads and diffs blobs: blocking and CPU-bound, so on a worker, bounded by the allowance.
    computation.result =
        vertx
            .executeBlocking(
                () -> {
                  JsonObject diff = files.diff(target, budget, computation.allowance);
                  return new Computed(diff.encode(), diff.getBoolean("too_large"));
                },
                false)
            .andThen(
                done -> {
                  running.remove(key, computation);
                  runningCount.decrementAndGet();
                  if (done.succeeded()) {
                    cache.put(key, done.result().json());
                    computations
                        .get(done.result().tooLarge() ? "too_large" : "complete")
                        .increment();
                  } else if (done.cause() instanceof DiffCancelledException) {
                    computations.get("cancelled").increment();
                    LOG.log(
                        System.Logger.Level.INFO,
                        "stopped the diff of "
                            + target.ref()
                            + " in "
                            + target.repo()
                            + ": every client waiting for it went away");
                  } else {
                    computations.get("failed").increment();
                  }
                })
            .map(Computed::json);
    return computation;
  }

  private record Computed(String json, boolean tooLarge) {}

  /**
   * One diff being computed and the clients waiting for it; on the context only (but the
   * allowance).
   */
  private static final class Computation {
    final DiffAllowance allowance;
    Future<String> result;
    int waiters;

    Computation(DiffAllowance allowance) {
      this.allowance = allowance;
    }

    void leave(DiffTarget target) {
      if (--waiters == 0 && !result.isComplete()) {
        allowance.cancel();
      }
    }
  }
}
