package ai.spboucher.spbgit.gateway.jobs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.spboucher.spbgit.common.RevocationList;
import ai.spboucher.spbgit.gateway.audit.AuditLog;
import ai.spboucher.spbgit.gateway.auth.JobTokens;
import ai.spboucher.spbgit.gateway.auth.Principal;
import ai.spboucher.spbgit.gateway.auth.SigningKey;
import ai.spboucher.spbgit.gateway.errors.RequestException;
import ai.spboucher.spbgit.gateway.repos.RepoName;
import ai.spboucher.spbgit.gateway.repos.RepositoryStore;
import ai.spboucher.spbgit.gateway.review.DiffBudget;
import ai.spboucher.spbgit.gateway.review.NewComment;
import ai.spboucher.spbgit.gateway.review.ProposalDiffs;
import ai.spboucher.spbgit.gateway.review.ReviewComments;
import ai.spboucher.spbgit.proto.CacheOutcome;
import ai.spboucher.spbgit.proto.JobEvent;
import ai.spboucher.spbgit.proto.JobStatus;
import ai.spboucher.spbgit.proto.RequestRefusal;
import ai.spboucher.spbgit.proto.StatusChange;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.eclipse.jgit.lib.CommitBuilder;
import org.eclipse.jgit.lib.Constants;
import org.eclipse.jgit.lib.FileMode;
import org.eclipse.jgit.lib.ObjectId;
import org.eclipse.jgit.lib.ObjectInserter;
import org.eclipse.jgit.lib.PersonIdent;
import org.eclipse.jgit.lib.RefUpdate;
import org.eclipse.jgit.lib.Repository;
import org.eclipse.jgit.lib.TreeFormatter;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Writes the audit log fixture {@link AuditLogReplayTest} replays: drives the real {@link
 * JobLifecycle} (a queue stand-in, a JGit repository and an audit log on disk) through every event
 * the log has, then stores the log and each job's API form next to it. Run only on purpose, to pin
 * the format a release writes: {@code mvn -pl gateway-verticle -am test -Dtest=AuditFixtureWriter
 * -Dspbgit.writeAuditFixture=true -Dsurefire.failIfNoSpecifiedTests=false} from the repository
 * root; the files land in {@code src/test/resources/audit/}.
 */
@ExtendWith(VertxExtension.class)
@EnabledIfSystemProperty(named = "spbgit.writeAuditFixture", matches = "true")
class AuditFixtureWriter {

  static final Path FIXTURES = Path.of("src/test/resources/audit");
  static final String LOG = "agent-jobs.jsonl";
  static final String JOBS = "jobs.json";

  private static final RepoName DEMO = RepoName.of("demo");
  private static final RepoName PYTHON = RepoName.of("python-demo");
  private static final Principal.Owner OWNER = new Principal.Owner("pat-1");
  private static final NewJob EXEC_JOB =
      new NewJob("say hello", "echo hello > hello.txt", "", "", "", "");

  @TempDir Path tmp;
  private final JobLifecycleFixture.MovableClock clock =
      new JobLifecycleFixture.MovableClock(Instant.parse("2026-12-01T10:00:00Z"));
  private final JobLifecycleFixture.FakeQueue queue = new JobLifecycleFixture.FakeQueue();
  private Vertx vertx;
  private Context context;
  private RepositoryStore repos;
  private JobLifecycle jobs;

  @Test
  void writesTheFixture(Vertx vertx) throws Exception {
    this.vertx = vertx;
    repos = new RepositoryStore(tmp.resolve("repos"));
    repos.create(DEMO, "");
    commit(DEMO, "refs/heads/main", null, Map.of("README.md", "hello\n", "AGENTS.md", "be nice\n"));
    repos.create(PYTHON, "");
    commit(
        PYTHON,
        "refs/heads/main",
        null,
        Map.of(
            "requirements.txt",
            "pytest\n",
            ".spbgit/agent.yml",
            "image: python\n"
                + "setup: |\n"
                + "  python3 -m venv /work/.venv\n"
                + "setup_egress:\n"
                + "  - pypi.org:443\n"
                + "egress:\n"
                + "  - example.org:443\n"
                + "cache:\n"
                + "  - /work/.venv\n"
                + "cache_key_files:\n"
                + "  - requirements.txt\n"
                + "test: /work/.venv/bin/python -m pytest -q\n"));
    Path logFile = tmp.resolve(LOG);
    try (AuditLog audit = AuditLog.open(logFile, clock)) {
      JobTokens tokens =
          new JobTokens(
              SigningKey.loadOrCreate(tmp.resolve("keys")),
              RevocationList.load(tmp.resolve("revoked-job-tokens.json"), clock),
              clock);
      context = vertx.getOrCreateContext();
      Proposals proposals = new Proposals(repos);
      jobs =
          on(
              () ->
                  Future.succeededFuture(
                      JobLifecycle.open(
                          vertx,
                          audit,
                          tokens,
                          repos,
                          proposals,
                          name -> "https://git.example.org/" + name.value() + ".git",
                          Duration.ofMinutes(30),
                          List.of("model-a", "model-b"),
                          clock)));
      on(
          () -> {
            jobs.attach(queue);
            return Future.succeededFuture();
          });
      ReviewComments comments =
          new ReviewComments(
              vertx,
              jobs.ledger(),
              proposals,
              new ProposalDiffs(
                  vertx,
                  repos,
                  DiffBudget.withTime(DiffBudget.DEFAULT_TIME),
                  new SimpleMeterRegistry()));
      drive(comments);
      JsonArray views = new JsonArray();
      for (Job job : on(() -> Future.succeededFuture(jobs.ledger().list(null)))) {
        views.add(
            new JsonObject()
                .put("job", job.toJson(WorkShas.NONE))
                .put("comments", new JsonArray(jobs.ledger().comments(job.id()))));
      }
      assertTrue(AuditLog.verify(logFile).ok());
      Files.createDirectories(FIXTURES);
      Files.copy(logFile, FIXTURES.resolve(LOG), java.nio.file.StandardCopyOption.REPLACE_EXISTING);
      Files.writeString(FIXTURES.resolve(JOBS), views.encodePrettily() + "\n");
    }
  }

  /** Every event the log has today, in the order a busy gateway could write them. */
  private void drive(ReviewComments comments) throws Exception {
    // An exec job: dispatched, started, pushes, finishes, approved.
    Job exec = on(() -> jobs.creation().create(DEMO, EXEC_JOB, OWNER));
    tick();
    deliver(exec.id(), started(exec.id()));
    tick();
    jobs.runnerEvents()
        .recordRefsWritten(
            exec.id(),
            DEMO.value(),
            exec.tokenId(),
            new JsonArray()
                .add(
                    new JsonObject()
                        .put("ref", exec.proposalRef())
                        .put("old", ObjectId.zeroId().name())
                        .put("new", "1111111111111111111111111111111111111111")));
    waitFor(() -> jobs.ledger().get(exec.id()).orElseThrow().refsWritten().isEmpty() ? null : true);
    tick();
    deliver(exec.id(), finished(exec.id(), "ok"));
    String execWork =
        commit(DEMO, exec.proposalRef(), "refs/heads/main", files("hello.txt", "hello\n"));
    tick();
    on(
        () ->
            jobs.decisions()
                .approve(jobs.ledger().get(exec.id()).orElseThrow(), "main", execWork, OWNER));

    // A built-in agent llm job with instructions, metered spend, rejected, its refs deleted.
    tick();
    Job llm =
        on(() -> jobs.creation().create(DEMO, new NewJob("think hard", "", "", "", "", ""), OWNER));
    tick();
    deliver(llm.id(), started(llm.id()).setAgent("builtin").setAgentVersion("0.9.1"));
    tick();
    deliver(
        llm.id(),
        finished(llm.id(), "exit_code:1")
            .setDetail("the agent gave up")
            .setProvider("openai")
            .setModel("model-a")
            .setInputTokens(1200)
            .setOutputTokens(345));
    commit(
        DEMO, "refs/agents/" + llm.id() + "/partial", "refs/heads/main", files("idea.txt", "hm\n"));
    tick();
    on(() -> jobs.decisions().reject(jobs.ledger().get(llm.id()).orElseThrow(), OWNER));
    tick();
    on(() -> jobs.decisions().deleteRefs(jobs.ledger().get(llm.id()).orElseThrow(), OWNER));

    // A CLI agent job in an environment: a cache hit, setup facts, a refused forged request.
    tick();
    Job claude =
        on(
            () ->
                jobs.creation()
                    .create(
                        PYTHON,
                        new NewJob("fix the tests", "", "model-b", "", "", "claude-code"),
                        OWNER));
    tick();
    deliver(
        claude.id(),
        started(claude.id())
            .setImageDigest("sha256:" + "ab".repeat(32))
            .setCache(CacheOutcome.CACHE_HIT)
            .setAgent("claude-code")
            .setAgentVersion("2.1.329")
            .setCacheKey("ck-" + "cd".repeat(16))
            .setCacheProducerJob(exec.id())
            .setCacheProducerCommit(execWork));
    tick();
    deliver(refused(claude.id(), 99, "not signed by the gateway"));
    tick();
    deliver(
        claude.id(),
        finished(claude.id(), "ok")
            .setProvider("anthropic")
            .setModel("model-b")
            .setInputTokens(5000)
            .setOutputTokens(700)
            .setCacheNote("setup cache kept")
            .addSetupChanges("M requirements.txt")
            .addSetupChanges("A .venv-marker"));

    // An exec job with the model endpoint, a cache miss, a timeout.
    tick();
    Job metered =
        on(
            () ->
                jobs.creation()
                    .create(
                        PYTHON,
                        new NewJob("run my agent", "./agent.sh", "model-b", "", "", ""),
                        OWNER));
    tick();
    deliver(
        metered.id(),
        started(metered.id())
            .setImageDigest("sha256:" + "ef".repeat(32))
            .setCache(CacheOutcome.CACHE_MISS));
    tick();
    deliver(metered.id(), finished(metered.id(), "timeout").setDetail("wall-clock limit"));

    // A best-of-N group: both attempts propose, the second is approved, the first superseded.
    tick();
    List<Job> attempts =
        on(() -> jobs.creation().createGroup(DEMO, EXEC_JOB, OWNER, 2).map(Map.Entry::getValue));
    for (Job attempt : attempts) {
      tick();
      deliver(attempt.id(), finished(attempt.id(), "ok"));
    }
    commit(DEMO, attempts.get(0).proposalRef(), "refs/heads/main", files("a.txt", "a\n"));
    String chosen =
        commit(DEMO, attempts.get(1).proposalRef(), "refs/heads/main", files("b.txt", "b\n"));
    tick();
    on(
        () ->
            jobs.decisions()
                .approve(
                    jobs.ledger().get(attempts.get(1).id()).orElseThrow(),
                    "feature",
                    chosen,
                    OWNER));

    // Review comments on an exec job's proposal, then its revision.
    tick();
    Job reviewed = on(() -> jobs.creation().create(DEMO, EXEC_JOB, OWNER));
    tick();
    deliver(reviewed.id(), finished(reviewed.id(), "ok"));
    String work =
        commit(
            DEMO, reviewed.proposalRef(), "refs/heads/main", files("hello.txt", "hello\nworld\n"));
    tick();
    on(
        () ->
            comments.add(
                jobs.ledger().get(reviewed.id()).orElseThrow(),
                new NewComment("say more", "hello.txt", "new", 2, work),
                OWNER));
    tick();
    on(
        () ->
            comments.add(
                jobs.ledger().get(reviewed.id()).orElseThrow(),
                new NewComment("looks fine overall", null, null, null, null),
                OWNER));
    tick();
    Job revision =
        on(
            () ->
                jobs.revisions()
                    .revise(
                        jobs.ledger().get(reviewed.id()).orElseThrow(),
                        new NewRevision("and more", null, "echo more >> hello.txt", ""),
                        OWNER));
    tick();
    deliver(revision.id(), started(revision.id()));

    // Gateway-decided ends: a runner_error on publishing, a cancel, a runner lost.
    tick();
    queue.publishFailure = new IllegalStateException("timed out");
    try {
      on(() -> jobs.creation().create(DEMO, EXEC_JOB, OWNER));
    } catch (RequestException.Unavailable expected) {
      // Recorded as a runner_error end.
    }
    queue.publishFailure = null;
    tick();
    deliver(revision.id(), finished(revision.id(), "ok"));
    tick();
    Job cancelled = on(() -> jobs.creation().create(DEMO, EXEC_JOB, OWNER));
    queue.removesCancelled = true;
    tick();
    on(() -> jobs.decisions().cancel(cancelled.id()));
    tick();
    Job lost = on(() -> jobs.creation().create(DEMO, EXEC_JOB, OWNER));
    tick();
    deliver(lost.id(), started(lost.id()));
    clock.set(Instant.parse(lost.deadline()).plus(RunnerEvents.LOST_AFTER).plusSeconds(1));
    on(() -> jobs.runnerEvents().reapOverdueJobs().map(v -> true));
    // One job left queued at the runner (dispatched) and one started, as a live gateway has.
    tick();
    on(() -> jobs.creation().create(DEMO, EXEC_JOB, OWNER));
    tick();
    Job running = on(() -> jobs.creation().create(PYTHON, EXEC_JOB, OWNER));
    tick();
    deliver(running.id(), started(running.id()).setCache(CacheOutcome.CACHE_NONE));
  }

  private void tick() {
    clock.set(clock.instant().plusSeconds(7));
  }

  private void deliver(JobEvent event) throws Exception {
    assertTrue(queue.deliver(event).succeeded());
  }

  private static StatusChange.Builder started(String jobId) {
    return StatusChange.newBuilder()
        .setStatus(JobStatus.STARTED)
        .setRunnerId("runner-1")
        .setContainerId("container-" + jobId);
  }

  private static StatusChange.Builder finished(String jobId, String reason) {
    return StatusChange.newBuilder()
        .setStatus(JobStatus.FINISHED)
        .setExitReason(reason)
        .setRunnerId("runner-1")
        .setContainerId("container-" + jobId);
  }

  private void deliver(String jobId, StatusChange.Builder change) throws Exception {
    deliver(JobEvent.newBuilder().setJobId(jobId).setStatus(change).build());
  }

  private static JobEvent refused(String jobId, long streamSequence, String reason) {
    return JobEvent.newBuilder()
        .setJobId(jobId)
        .setRefusal(
            RequestRefusal.newBuilder()
                .setReason(reason)
                .setRunnerId("runner-2")
                .setStreamSequence(streamSequence))
        .build();
  }

  private static Map<String, String> files(String path, String content) {
    return Map.of("README.md", "hello\n", "AGENTS.md", "be nice\n", path, content);
  }

  private <T> T on(Callable<Future<T>> action) throws Exception {
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

  private <T> T waitFor(Callable<T> read) throws Exception {
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

  private String commit(RepoName repo, String ref, String parent, Map<String, String> files)
      throws Exception {
    try (Repository repository = repos.open(repo);
        ObjectInserter inserter = repository.newObjectInserter()) {
      CommitBuilder commit = new CommitBuilder();
      commit.setTreeId(tree(inserter, files));
      if (parent != null) {
        commit.setParentId(repository.resolve(parent));
      }
      PersonIdent who = new PersonIdent("Test", "test@example.org", 0, 0);
      commit.setAuthor(who);
      commit.setCommitter(who);
      commit.setMessage("work\n");
      ObjectId id = inserter.insert(commit);
      inserter.flush();
      RefUpdate update = repository.updateRef(ref);
      update.setNewObjectId(id);
      assertEquals(RefUpdate.Result.NEW, update.update());
      return id.name();
    }
  }

  private static ObjectId tree(ObjectInserter inserter, Map<String, String> files)
      throws Exception {
    TreeMap<String, Map<String, String>> dirs = new TreeMap<>();
    TreeMap<String, Object> sorted = new TreeMap<>();
    for (var file : files.entrySet()) {
      int slash = file.getKey().indexOf('/');
      if (slash < 0) {
        sorted.put(
            file.getKey(),
            inserter.insert(Constants.OBJ_BLOB, file.getValue().getBytes(StandardCharsets.UTF_8)));
      } else {
        dirs.computeIfAbsent(file.getKey().substring(0, slash), d -> new HashMap<>())
            .put(file.getKey().substring(slash + 1), file.getValue());
      }
    }
    // Git sorts a tree's entries by name, a directory as if its name ended in '/'.
    dirs.forEach((name, sub) -> sorted.put(name + "/", sub));
    TreeFormatter tree = new TreeFormatter();
    for (var entry : sorted.entrySet()) {
      if (entry.getValue() instanceof ObjectId blob) {
        tree.append(entry.getKey(), FileMode.REGULAR_FILE, blob);
      } else {
        @SuppressWarnings("unchecked")
        Map<String, String> sub = (Map<String, String>) entry.getValue();
        String name = entry.getKey().substring(0, entry.getKey().length() - 1);
        tree.append(name, FileMode.TREE, tree(inserter, sub));
      }
    }
    return inserter.insert(tree);
  }
}
