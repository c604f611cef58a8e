package ai.spboucher.spbgit.gateway.jobs;

import static org.junit.jupiter.api.Assertions.assertEquals;

import ai.spboucher.spbgit.common.RevocationList;
import ai.spboucher.spbgit.gateway.audit.AuditLog;
import ai.spboucher.spbgit.gateway.auth.JobTokens;
import ai.spboucher.spbgit.gateway.auth.Principal;
import ai.spboucher.spbgit.gateway.auth.SigningKey;
import ai.spboucher.spbgit.gateway.repos.RepoName;
import ai.spboucher.spbgit.gateway.repos.RepositoryStore;
import ai.spboucher.spbgit.proto.JobEvent;
import ai.spboucher.spbgit.proto.JobRequest;
import ai.spboucher.spbgit.proto.JobStatus;
import ai.spboucher.spbgit.proto.RequestRefusal;
import ai.spboucher.spbgit.proto.StatusChange;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.eclipse.jgit.lib.CommitBuilder;
import org.eclipse.jgit.lib.Constants;
import org.eclipse.jgit.lib.ObjectId;
import org.eclipse.jgit.lib.ObjectInserter;
import org.eclipse.jgit.lib.PersonIdent;
import org.eclipse.jgit.lib.RefUpdate;
import org.eclipse.jgit.lib.Repository;
import org.eclipse.jgit.lib.TreeFormatter;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * The job lifecycle's parts against a fake queue, with the real parts under it: an audit log in a
 * temporary directory, a JGit bare repository on disk, job tokens signed with a real key and
 * revoked in a real revocation list. Each test class of a part extends it.
 */
@ExtendWith(VertxExtension.class)
abstract class JobLifecycleFixture {

  static final RepoName REPO = RepoName.of("demo");
  static final Principal.Owner OWNER = new Principal.Owner("pat-1");
  static final NewJob EXEC_JOB = new NewJob("say hello", "echo hello > hello.txt", "", "", "", "");

  @TempDir Path tmp;
  final MovableClock clock = new MovableClock(Instant.parse("2026-12-01T10:00:00Z"));
  final FakeQueue queue = new FakeQueue();
  Vertx vertx;
  Context context;
  AuditLog audit;
  JobTokens tokens;
  RepositoryStore repos;
  JobLifecycle jobs;

  @BeforeEach
  void openTheDataDirectory(Vertx vertx) throws Exception {
    this.vertx = vertx;
    repos = new RepositoryStore(tmp.resolve("repos"));
    repos.create(REPO, "");
    commitOnMain();
    audit = AuditLog.open(tmp.resolve("agent-jobs.jsonl"), clock);
    tokens =
        new JobTokens(
            SigningKey.loadOrCreate(tmp.resolve("keys")),
            RevocationList.load(tmp.resolve("revoked-job-tokens.json"), clock),
            clock);
    context = vertx.getOrCreateContext();
    jobs = startLifecycle(List.of());
    on(
        () -> {
          jobs.attach(queue);
          return Future.succeededFuture();
        });
  }

  @AfterEach
  void closeTheLog() throws Exception {
    audit.close();
  }

  /** Points {@code ref} at a new commit on main that adds {@code path}; returns its id. */
  String commitOn(String ref, String path, String content) throws Exception {
    return commit(ref, "refs/heads/main", Map.of("README.md", "hello\n", path, content));
  }

  /** Creates {@code ref} at a new commit of {@code files} on {@code parent} (null: a root). */
  String commit(String ref, String parent, Map<String, String> files) throws Exception {
    return commit(ref, parent, files, false);
  }

  /** As {@link #commit(String, String, Map)}; {@code moves}: the ref exists and moves on. */
  String commit(String ref, String parent, Map<String, String> files, boolean moves)
      throws Exception {
    try (Repository repository = repos.open(REPO);
        ObjectInserter inserter = repository.newObjectInserter()) {
      CommitBuilder commit = new CommitBuilder();
      commit.setTreeId(tree(inserter, files));
      if (parent != null) {
        commit.setParentId(repository.resolve(parent));
      }
      PersonIdent who = new PersonIdent("Test", "test@example.org");
      commit.setAuthor(who);
      commit.setCommitter(who);
      commit.setMessage("work\n");
      ObjectId id = inserter.insert(commit);
      inserter.flush();
      RefUpdate update = repository.updateRef(ref);
      update.setNewObjectId(id);
      assertEquals(moves ? RefUpdate.Result.FAST_FORWARD : RefUpdate.Result.NEW, update.update());
      return id.name();
    }
  }

  /** A lifecycle on the test's log and repositories, as a (re)started gateway opens it. */
  JobLifecycle startLifecycle(List<String> models) throws Exception {
    return on(
        () ->
            Future.succeededFuture(
                JobLifecycle.open(
                    vertx,
                    audit,
                    tokens,
                    repos,
                    new Proposals(repos),
                    name -> "https://git.example.org/" + name.value() + ".git",
                    Duration.ofMinutes(30),
                    models,
                    clock)));
  }

  static JobEvent refused(String jobId, long streamSequence, String reason) {
    return JobEvent.newBuilder()
        .setJobId(jobId)
        .setRefusal(
            RequestRefusal.newBuilder()
                .setReason(reason)
                .setRunnerId("runner-2")
                .setStreamSequence(streamSequence))
        .build();
  }

  Job job(String id) throws Exception {
    return on(() -> Future.succeededFuture(jobs.ledger().get(id).orElseThrow()));
  }

  JsonObject entry(String jobId, String event) {
    return audit
        .entries(e -> jobId.equals(e.getString("job")) && event.equals(e.getString("event")))
        .get(0);
  }

  List<String> events(String jobId) {
    return audit.entries(e -> jobId.equals(e.getString("job"))).stream()
        .map(e -> e.getString("event"))
        .toList();
  }

  /** Runs {@code action} on the service's context and waits for its future. */
  <T> T on(Callable<Future<T>> action) throws Exception {
    CompletableFuture<T> result = new CompletableFuture<>();
    context.runOnContext(
        v -> {
          try {
            action
                .call()
                .onComplete(
                    ar -> {
                      if (ar.succeeded()) {
                        result.complete(ar.result());
                      } else {
                        result.completeExceptionally(ar.cause());
                      }
                    });
          } catch (Exception e) {
            result.completeExceptionally(e);
          }
        });
    try {
      return result.get(20, TimeUnit.SECONDS);
    } catch (ExecutionException e) {
      throw e.getCause() instanceof Exception cause ? cause : e;
    }
  }

  Throwable failure(Callable<Future<?>> action) throws Exception {
    try {
      on(action::call);
    } catch (RuntimeException e) {
      return e;
    }
    throw new AssertionError("expected a failure");
  }

  <T> T waitFor(Callable<T> read) throws Exception {
    long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
    while (System.nanoTime() < end) {
      T value = on(() -> Future.succeededFuture(read.call()));
      if (value != null) {
        return value;
      }
      Thread.sleep(20);
    }
    throw new AssertionError("timed out");
  }

  static JobEvent started(String jobId) {
    return JobEvent.newBuilder()
        .setJobId(jobId)
        .setStatus(
            StatusChange.newBuilder()
                .setStatus(JobStatus.STARTED)
                .setRunnerId("runner-1")
                .setContainerId("container-1"))
        .build();
  }

  static JobEvent finished(String jobId, String reason) {
    return JobEvent.newBuilder()
        .setJobId(jobId)
        .setStatus(
            StatusChange.newBuilder()
                .setStatus(JobStatus.FINISHED)
                .setExitReason(reason)
                .setRunnerId("runner-1"))
        .build();
  }

  void commitOnMain() throws Exception {
    commit("refs/heads/main", null, Map.of("README.md", "hello\n"));
  }

  /** Inserts the tree of {@code files} (paths with {@code /} in subtrees); returns its id. */
  static ObjectId tree(ObjectInserter inserter, Map<String, String> files) throws Exception {
    TreeMap<String, Map<String, String>> dirs = new TreeMap<>();
    TreeMap<String, ObjectId> entries = new TreeMap<>();
    for (var file : files.entrySet()) {
      int slash = file.getKey().indexOf('/');
      if (slash < 0) {
        entries.put(
            file.getKey(),
            inserter.insert(Constants.OBJ_BLOB, file.getValue().getBytes(StandardCharsets.UTF_8)));
      } else {
        dirs.computeIfAbsent(file.getKey().substring(0, slash), d -> new HashMap<>())
            .put(file.getKey().substring(slash + 1), file.getValue());
      }
    }
    TreeFormatter tree = new TreeFormatter();
    // Git sorts a tree's entries by name, a directory as if its name ended in '/'.
    TreeMap<String, Object> sorted = new TreeMap<>();
    entries.forEach((name, id) -> sorted.put(name, id));
    dirs.forEach((name, sub) -> sorted.put(name + "/", sub));
    for (var entry : sorted.entrySet()) {
      if (entry.getValue() instanceof ObjectId blob) {
        tree.append(entry.getKey(), org.eclipse.jgit.lib.FileMode.REGULAR_FILE, blob);
      } else {
        @SuppressWarnings("unchecked")
        Map<String, String> sub = (Map<String, String>) entry.getValue();
        String name = entry.getKey().substring(0, entry.getKey().length() - 1);
        tree.append(name, org.eclipse.jgit.lib.FileMode.TREE, tree(inserter, sub));
      }
    }
    return inserter.insert(tree);
  }

  /**
   * The queue as the lifecycle sees it: what was published and cancelled, and events handed over by
   * the test.
   */
  static final class FakeQueue implements JobQueue {

    volatile boolean connected = true;
    volatile RuntimeException publishFailure;
    volatile boolean publishHangs;
    volatile boolean removesCancelled;

    /** Publishes that succeed before {@link #publishFailure} applies; every one when negative. */
    volatile int publishesBeforeFailure = -1;

    final List<JobRequest> published = new ArrayList<>();

    /** The token each published request was given, by job id: the bus seals it. */
    final Map<String, String> tokens = new HashMap<>();

    final List<String> cancelled = new ArrayList<>();
    private Function<JobEvent, Future<?>> handler;
    private Context handlerContext;

    @Override
    public boolean isConnected() {
      return connected;
    }

    @Override
    public synchronized Future<Long> publish(JobRequest request, String jobToken, Context context) {
      if (publishHangs) {
        return Promise.<Long>promise().future();
      }
      if (publishFailure != null
          && (publishesBeforeFailure < 0 || published.size() >= publishesBeforeFailure)) {
        return Future.failedFuture(publishFailure);
      }
      published.add(request);
      tokens.put(request.getJobId(), jobToken);
      return Future.succeededFuture((long) published.size());
    }

    @Override
    public synchronized boolean cancel(String jobId, long queueSequence) {
      cancelled.add(jobId + "@" + queueSequence);
      return removesCancelled;
    }

    @Override
    public void consumeStatus(Context context, Function<JobEvent, Future<?>> handler) {
      this.handlerContext = context;
      this.handler = handler;
    }

    /**
     * Hands {@code event} to the service as the NATS consumer would and waits until it is handled.
     */
    Future<?> deliver(JobEvent event) throws Exception {
      CompletableFuture<Future<?>> handled = new CompletableFuture<>();
      handlerContext.runOnContext(
          v ->
              handler
                  .apply(event)
                  .onComplete(
                      ar ->
                          handled.complete(
                              ar.succeeded()
                                  ? Future.succeededFuture()
                                  : Future.failedFuture(ar.cause()))));
      return handled.get(20, TimeUnit.SECONDS);
    }
  }

  /** A clock the test moves. */
  static final class MovableClock extends Clock {

    private volatile Instant now;

    MovableClock(Instant start) {
      this.now = start;
    }

    void set(Instant instant) {
      now = instant;
    }

    @Override
    public Instant instant() {
      return now;
    }

    @Override
    public ZoneOffset getZone() {
      return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(java.time.ZoneId zone) {
      return this;
    }
  }
}
