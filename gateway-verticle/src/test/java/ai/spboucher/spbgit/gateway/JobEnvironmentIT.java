package ai.spboucher.spbgit.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.spboucher.spbgit.gateway.environment.CacheKeyFilesTest;
import ai.spboucher.spbgit.proto.CacheOutcome;
import ai.spboucher.spbgit.proto.Environment;
import ai.spboucher.spbgit.proto.JobRequest;
import ai.spboucher.spbgit.proto.JobStatus;
import ai.spboucher.spbgit.proto.StatusChange;
import ai.spboucher.spbgit.testsupport.GitCli;
import ai.spboucher.spbgit.testsupport.Stack;
import io.nats.client.Connection;
import io.vertx.core.json.JsonObject;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A job's environment comes from {@code .spbgit/agent.yml} on the repository's default branch when
 * it is created: it is recorded in {@code job_created}, sent in the {@code JobRequest} and shown in
 * the job JSON; a bad file is refused with its line and key and nothing is recorded; neither a
 * job's base nor a proposal can change it until an owner approves the change onto the default
 * branch. The gateway, NATS, git pushes and repositories are real; the test reads the request from
 * the queue's stream and reports the start as a runner does.
 */
class JobEnvironmentIT {

  private static final String PYTHON_FILE =
      """
      image: python
      setup: |
        python3 -m venv /work/.venv
        /work/.venv/bin/pip install -r requirements.txt
      setup_egress: [pypi.example.org:443]
      cache: [/work/.venv]
      cache_key_files: [requirements.txt]
      test: /work/.venv/bin/pytest -q
      """;

  @TempDir static Path tmp;
  private static Stack stack;
  private static TestGateway gateway;
  private static Connection runner;
  private static GitCli git;

  @BeforeAll
  static void start() throws Exception {
    stack = Stack.builder(tmp).nats().gateway(new JsonObject()).start();
    gateway = stack.gateway(TestGateway.class);
    runner = stack.natsConnection();
    git = stack.git();
  }

  @AfterAll
  static void stop() throws Exception {
    stack.close();
  }

  @Test
  void aJobRecordsSendsAndShowsTheDefaultBranchEnvironment() throws Exception {
    Path work = repoWithFile("py", PYTHON_FILE);
    String blob = git.ok(work, "rev-parse", "main:.spbgit/agent.yml").output().strip();

    JsonObject job = gateway.createJob("py", new JsonObject().put("task", "t").put("exec", "true"));
    JsonObject environment = job.getJsonObject("environment");
    assertEquals("python", environment.getString("image"), job.encodePrettily());
    assertEquals(
        List.of("pypi.example.org:443"), environment.getJsonArray("setup_egress").getList());
    assertEquals(blob, environment.getString("blob"));
    assertEquals(64, environment.getString("hash").length());
    assertEquals(
        "/work/.venv/bin/pytest -q",
        job.getString("test_command"),
        "the file's test is the default");
    assertEquals("a runner offering image 'python'", job.getString("waiting_for"));

    JsonObject created = gateway.auditEntry(job.getString("id"), "job_created");
    assertEquals("python", created.getString("image"));
    assertEquals(
        environment.getString("hash"), created.getJsonObject("environment").getString("hash"));
    assertEquals(blob, created.getJsonObject("environment").getString("blob"));

    JobRequest request = RunnerStandIn.queuedRequest(runner, gateway, job.getString("id"));
    String head = git.ok(work, "rev-parse", "main").output().strip();
    assertEquals(head, request.getBaseSha(), "the commit the key files were read at");
    Environment sent = request.getEnvironment();
    // requirements.txt is not in the repository: the digest of one missing key file.
    assertEquals(
        CacheKeyFilesTest.expected(new String[] {"requirements.txt"}, new byte[][] {null}),
        sent.getCacheKeyFilesDigest());
    assertEquals("python", sent.getImage());
    assertTrue(sent.getSetup().contains("pip install -r requirements.txt"), sent.getSetup());
    assertEquals(List.of("pypi.example.org:443"), sent.getSetupEgressList());
    assertEquals(List.of(), sent.getEgressList());
    assertEquals(List.of("/work/.venv"), sent.getCacheList());
    assertEquals(List.of("requirements.txt"), sent.getCacheKeyFilesList());
    assertEquals(environment.getString("hash"), sent.getHash());

    publishStatusOf(
        job.getString("id"),
        StatusChange.newBuilder()
            .setStatus(JobStatus.STARTED)
            .setRunnerId("r1")
            .setContainerId("c0ffee")
            .setImageDigest("sha256:" + "ab".repeat(32))
            .setCache(CacheOutcome.CACHE_HIT)
            .build());
    JsonObject started =
        awaitJob("py", job.getString("id"), j -> "started".equals(j.getString("status")));
    assertEquals("sha256:" + "ab".repeat(32), started.getString("image_digest"));
    assertEquals("hit", started.getString("cache"));
    assertNull(started.getValue("waiting_for"), "a runner has it");
    JsonObject startEntry = gateway.auditEntry(job.getString("id"), "job_started");
    assertEquals("hit", startEntry.getString("cache"));
    assertEquals("sha256:" + "ab".repeat(32), startEntry.getString("image_digest"));

    JsonObject explicit =
        gateway.createJob(
            "py",
            new JsonObject()
                .put("task", "t")
                .put("exec", "true")
                .put("test_command", "make check"));
    assertEquals(
        "make check", explicit.getString("test_command"), "the request's test command wins");

    JsonObject shown = gateway.getJson("/api/v1/repos/py/agent-environment");
    assertEquals(".spbgit/agent.yml", shown.getString("path"));
    assertEquals("main", shown.getString("branch"));
    assertEquals(blob, shown.getString("blob"));
    assertEquals(
        environment.getString("hash"), shown.getJsonObject("environment").getString("hash"));
    assertEquals(
        List.of("/work/.venv"), shown.getJsonObject("environment").getJsonArray("cache").getList());
  }

  @Test
  void aBadFileIsRefusedWithItsLineAndKeyAndNothingIsRecorded() throws Exception {
    repoWithFile(
        "bad",
        "image: python\nsetup: pip install -r requirements.txt\nsetup_egress: pypi.org:443\n");

    HttpResponse<String> refused =
        gateway.postJob("bad", new JsonObject().put("task", "t").put("exec", "true"));
    assertEquals(400, refused.statusCode(), refused.body());
    assertEquals(
        ".spbgit/agent.yml line 3: 'setup_egress' must be a list",
        new JsonObject(refused.body()).getString("error"));
    assertEquals(
        0,
        gateway.jobsOf("bad").size(),
        "nothing recorded: " + gateway.jobsOf("bad").encodePrettily());

    JsonObject shown = gateway.getJson("/api/v1/repos/bad/agent-environment");
    assertEquals(
        ".spbgit/agent.yml line 3: 'setup_egress' must be a list", shown.getString("error"));
    assertEquals(3, shown.getInteger("line"));
    assertEquals("setup_egress", shown.getString("key"));
    assertEquals("main", shown.getString("branch"));
    assertEquals(40, shown.getString("blob").length());
    assertFalse(shown.containsKey("environment"));
  }

  @Test
  void aRepositoryWithoutTheFileGetsTheDefaults() throws Exception {
    gateway.createRepo("plain");
    Path work = git.workTree(tmp, "plain");
    git.ok(work, "push", "-q", gateway.pushUrl("plain", gateway.ownerToken), "main");

    JsonObject shown = gateway.getJson("/api/v1/repos/plain/agent-environment");
    assertNull(shown.getValue("blob"), shown.encodePrettily());
    assertTrue(shown.containsKey("blob"));
    assertEquals("base", shown.getJsonObject("environment").getString("image"));
    assertEquals(
        List.of(), shown.getJsonObject("environment").getJsonArray("setup_egress").getList());

    JsonObject job =
        gateway.createJob("plain", new JsonObject().put("task", "t").put("exec", "true"));
    assertEquals("base", job.getJsonObject("environment").getString("image"));
    assertNull(job.getJsonObject("environment").getValue("blob"));
    assertEquals("a runner offering image 'base'", job.getString("waiting_for"));
    assertEquals(
        "base",
        RunnerStandIn.queuedRequest(runner, gateway, job.getString("id"))
            .getEnvironment()
            .getImage());

    gateway.createRepo("empty");
    JsonObject empty = gateway.getJson("/api/v1/repos/empty/agent-environment");
    assertEquals("main", empty.getString("branch"));
    assertNull(empty.getValue("blob"));
    assertEquals(
        404,
        gateway
            .api("GET", "/api/v1/repos/nosuch/agent-environment", gateway.ownerToken, null)
            .statusCode());
    assertEquals(
        401, gateway.api("GET", "/api/v1/repos/plain/agent-environment", null, null).statusCode());
  }

  @Test
  void theDefaultBranchFileIsUsedWhateverTheJobsBase() throws Exception {
    Path work = repoWithFile("based", PYTHON_FILE);
    git.ok(work, "checkout", "-q", "-b", "wide");
    Files.writeString(
        work.resolve(".spbgit/agent.yml"), "image: node\negress: [evil.example.org:443]\n");
    git.ok(work, "commit", "-q", "-am", "a wider environment on another branch");
    git.ok(work, "push", "-q", gateway.pushUrl("based", gateway.ownerToken), "wide");

    JsonObject job =
        gateway.createJob(
            "based", new JsonObject().put("task", "t").put("exec", "true").put("base", "wide"));
    assertEquals("wide", job.getString("base"));
    assertEquals(
        "python", job.getJsonObject("environment").getString("image"), job.encodePrettily());
    JobRequest request = RunnerStandIn.queuedRequest(runner, gateway, job.getString("id"));
    // The key files are read at the job's base, where its clone will be.
    String head = git.ok(work, "rev-parse", "wide").output().strip();
    assertEquals(head, request.getBaseSha(), "the commit the key files were read at");
    Environment sent = request.getEnvironment();
    // requirements.txt is not in the repository: the digest of one missing key file.
    assertEquals(
        CacheKeyFilesTest.expected(new String[] {"requirements.txt"}, new byte[][] {null}),
        sent.getCacheKeyFilesDigest());
    assertEquals("python", sent.getImage());
    assertEquals(List.of(), sent.getEgressList(), "the other branch's egress is not granted");
  }

  @Test
  void aProposalChangingTheEnvironmentIsFlaggedAndCountsOnlyOnceApproved() throws Exception {
    Path work = repoWithFile("prop", PYTHON_FILE);
    JsonObject first =
        gateway.createJob("prop", new JsonObject().put("task", "widen").put("exec", "true"));
    String id = first.getString("id");
    JobRequest request = RunnerStandIn.queuedRequest(runner, gateway, id);
    publishStatusOf(
        id,
        StatusChange.newBuilder()
            .setStatus(JobStatus.STARTED)
            .setRunnerId("r1")
            .setContainerId("c1")
            .build());
    Files.writeString(
        work.resolve(".spbgit/agent.yml"), "image: node\negress: [evil.example.org:443]\n");
    git.ok(work, "commit", "-q", "-am", "widen\n\nAgent-Job: " + id);
    String proposal = git.ok(work, "rev-parse", "HEAD").output().strip();
    git.ok(
        work,
        "push",
        "-q",
        gateway.pushUrl("prop", RunnerStandIn.jobToken(gateway, request)),
        "HEAD:refs/agents/" + id + "/proposal");
    publishStatusOf(
        id,
        StatusChange.newBuilder()
            .setStatus(JobStatus.FINISHED)
            .setExitReason("ok")
            .setRunnerId("r1")
            .setContainerId("c1")
            .build());
    awaitJob("prop", id, j -> "finished".equals(j.getString("status")));

    JsonObject diff = gateway.getJson("/api/v1/repos/prop/agent-jobs/" + id + "/diff");
    assertTrue(diff.getBoolean("changes_environment"), diff.encodePrettily());

    JsonObject next =
        gateway.createJob("prop", new JsonObject().put("task", "t").put("exec", "true"));
    assertEquals(
        "python",
        next.getJsonObject("environment").getString("image"),
        "the proposal is not approved");
    assertEquals(
        List.of(),
        RunnerStandIn.queuedRequest(runner, gateway, next.getString("id"))
            .getEnvironment()
            .getEgressList());

    HttpResponse<String> approved =
        gateway.api(
            "POST",
            "/api/v1/repos/prop/agent-jobs/" + id + "/approve",
            gateway.ownerToken,
            new JsonObject().put("branch", "main").put("sha", proposal).encode());
    assertEquals(200, approved.statusCode(), approved.body());
    JsonObject after =
        gateway.createJob("prop", new JsonObject().put("task", "t").put("exec", "true"));
    assertEquals(
        "node", after.getJsonObject("environment").getString("image"), after.encodePrettily());
    assertEquals(
        List.of("evil.example.org:443"),
        RunnerStandIn.queuedRequest(runner, gateway, after.getString("id"))
            .getEnvironment()
            .getEgressList());
  }

  @Test
  void aProposalLeavingSpbgitAloneIsNotFlagged() throws Exception {
    Path work = repoWithFile("calm", PYTHON_FILE);
    String id =
        gateway
            .createJob("calm", new JsonObject().put("task", "t").put("exec", "true"))
            .getString("id");
    JobRequest request = RunnerStandIn.queuedRequest(runner, gateway, id);
    Files.writeString(work.resolve("spbgit.txt"), "not the environment\n");
    git.ok(work, "add", ".");
    git.ok(work, "commit", "-q", "-m", "a file named like it");
    git.ok(
        work,
        "push",
        "-q",
        gateway.pushUrl("calm", RunnerStandIn.jobToken(gateway, request)),
        "HEAD:refs/agents/" + id + "/proposal");
    JsonObject diff = gateway.getJson("/api/v1/repos/calm/agent-jobs/" + id + "/diff");
    assertFalse(diff.getBoolean("changes_environment"), diff.encodePrettily());
  }

  /**
   * A repository whose default branch has {@code .spbgit/agent.yml} with {@code text}; returns the
   * work tree.
   */
  private static Path repoWithFile(String repo, String text) throws Exception {
    gateway.createRepo(repo);
    Path work = git.workTree(tmp, repo);
    Files.createDirectories(work.resolve(".spbgit"));
    Files.writeString(work.resolve(".spbgit/agent.yml"), text);
    git.commitAllAndPush(work, "job environment", gateway.pushUrl(repo, gateway.ownerToken));
    return work;
  }

  /** A job's STARTED as status event 1, anything after it as 2. */
  private static void publishStatusOf(String id, StatusChange change) throws Exception {
    RunnerStandIn.publishStatus(
        runner, id, change.getStatus() == JobStatus.STARTED ? 1 : 2, change);
  }

  private static JsonObject awaitJob(String repo, String id, Predicate<JsonObject> condition)
      throws Exception {
    String path = "/api/v1/repos/" + repo + "/agent-jobs/" + id;
    long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    JsonObject job = gateway.getJson(path);
    while (!condition.test(job) && System.nanoTime() < deadline) {
      Thread.sleep(100);
      job = gateway.getJson(path);
    }
    assertTrue(condition.test(job), job.encodePrettily());
    return job;
  }
}
