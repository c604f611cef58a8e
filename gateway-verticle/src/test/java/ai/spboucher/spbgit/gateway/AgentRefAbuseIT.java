package ai.spboucher.spbgit.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.spboucher.spbgit.proto.JobRequest;
import ai.spboucher.spbgit.proto.JobStatus;
import ai.spboucher.spbgit.proto.StatusChange;
import ai.spboucher.spbgit.proto.Subjects;
import ai.spboucher.spbgit.testsupport.GitCli;
import ai.spboucher.spbgit.testsupport.Stack;
import io.nats.client.Connection;
import io.nats.client.JetStreamSubscription;
import io.nats.client.Message;
import io.nats.client.PullSubscribeOptions;
import io.vertx.core.json.JsonObject;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What a job's token can do to a repository and to the gateway with the refs it is allowed to write
 * (issue 12): flood them (many refs, long names) or point them at something that is not a commit.
 * The gateway, NATS and git are real; the test takes each job from the queue and reports it as a
 * runner does, and pushes with the job's own token as the runner's git relay does.
 */
class AgentRefAbuseIT {

  private static final String REPO = "demo";

  @TempDir static Path tmp;
  static Stack stack;
  static TestGateway gateway;
  static Connection runner;
  static GitCli git;
  static Path work;
  static String head;

  @BeforeAll
  static void start() throws Exception {
    stack = Stack.builder(tmp).nats().gateway(new JsonObject()).start();
    gateway = stack.gateway(TestGateway.class);
    runner = stack.natsConnection();
    git = stack.git();
    work = stack.createRepo(REPO, "work");
    head = git.ok(work, "rev-parse", "HEAD").output().strip();
  }

  @AfterAll
  static void stop() throws Exception {
    stack.close();
  }

  @Test
  void aRefFloodIsRefusedPastTheLimitsAndLeavesTheAuditJobJsonAndRefAdvertisementSmall()
      throws Exception {
    JobRequest job = createJob();
    String prefix = "refs/agents/" + job.getJobId() + "/";
    Path audit = gateway.dataDir.resolve(DataDir.AUDIT_LOG);
    long auditBefore = Files.size(audit);

    RefFlood.Outcome shortNames =
        RefFlood.run(
            gateway.repoUrl(REPO),
            RunnerStandIn.jobToken(gateway, job),
            prefix,
            head,
            3,
            2_500,
            190);
    RefFlood.Outcome longNames =
        RefFlood.run(
            gateway.repoUrl(REPO),
            RunnerStandIn.jobToken(gateway, job),
            prefix,
            head,
            2,
            2_500,
            800);

    assertEquals(List.of(), shortNames.failures());
    assertEquals(32, shortNames.admitted().size());
    assertEquals(3 * 2_500 - 32, shortNames.refused().size());
    assertTrue(
        shortNames.refused().stream()
            .allMatch(
                l ->
                    l.endsWith("over the limit of 32 refs per job: " + prefix + " already has 32")),
        shortNames.refused().get(0));
    assertEquals(List.of(), longNames.failures());
    assertEquals(List.of(), longNames.admitted());
    assertEquals(2 * 2_500, longNames.refused().size());
    assertTrue(
        longNames.refused().stream()
            .allMatch(
                l ->
                    l.contains(
                        "job refs may have at most 200; job tokens may only push refs/agents/")),
        longNames.refused().get(0));
    assertEquals(
        32, git.refs(gateway.repoDir(REPO)).lines().filter(l -> l.startsWith(prefix)).count());

    String jobPath = "/api/v1/repos/" + REPO + "/agent-jobs/" + job.getJobId();
    awaitRefsWritten(jobPath, 32);
    // One refs_written entry of 32 refs of 190 characters, and nothing for the refused pushes.
    long auditGrowth = Files.size(audit) - auditBefore;
    assertTrue(auditGrowth < 12_000, "the audit log grew by " + auditGrowth + " bytes");
    assertSmall(jobPath, 12_000);
    assertSmall("/api/v1/repos/" + REPO + "/agent-jobs", 30_000);
    assertSmall("/api/v1/jobs", 30_000);
    assertSmall("/api/v1/agent-jobs?job=" + job.getJobId(), 12_000);
    for (String service : List.of("git-upload-pack", "git-receive-pack")) {
      HttpResponse<byte[]> refs =
          gateway.raw(
              HttpRequest.newBuilder(
                      URI.create(gateway.repoUrl(REPO) + "/info/refs?service=" + service))
                  .header("Authorization", JobTokenGateIT.basic(gateway.ownerToken))
                  .build());
      assertEquals(200, refs.statusCode());
      assertTrue(
          refs.body().length < 12_000,
          service + " advertisement: " + refs.body().length + " bytes");
    }
  }

  @Test
  void aJobCannotPointItsRefsAtBlobsOrTagsAndANonCommitProposalCannotBeDiffedOrApproved()
      throws Exception {
    JobRequest job = createJob();
    String proposal = "refs/agents/" + job.getJobId() + "/proposal";
    String blob =
        git.ok(
                work,
                "hash-object",
                "-w",
                Files.writeString(tmp.resolve("blob.txt"), "not a commit\n").toString())
            .output()
            .strip();
    git.ok(work, "tag", "-f", "-a", "-m", "a tag", "commit-tag");
    git.ok(work, "tag", "-f", "-a", "-m", "a tag", "blob-tag", blob);

    for (String source : List.of(blob, "refs/tags/commit-tag", "refs/tags/blob-tag")) {
      GitCli.Result push =
          git.run(
              work,
              "push",
              gateway.pushUrl(REPO, RunnerStandIn.jobToken(gateway, job)),
              source + ":" + proposal);
      assertFalse(push.ok(), push.output());
      assertTrue(
          push.output().contains("[remote rejected]")
              && push.output().contains("job refs may only point at " + "commits"),
          push.output());
    }
    assertFalse(git.refs(gateway.repoDir(REPO)).contains(proposal), "no proposal was written");

    // The owner is trusted to push anything, so a non-commit proposal can still exist.
    git.ok(work, "push", "-q", gateway.pushUrl(REPO, gateway.ownerToken), blob + ":" + proposal);
    RunnerStandIn.publishStatus(
        runner,
        job.getJobId(),
        1,
        StatusChange.newBuilder()
            .setStatus(JobStatus.FINISHED)
            .setExitReason("ok")
            .setRunnerId("r1")
            .setContainerId("c0ffee")
            .build());
    String jobPath = "/api/v1/repos/" + REPO + "/agent-jobs/" + job.getJobId();
    awaitFinished(jobPath);
    for (String[] pointee :
        new String[][] {
          {blob, "blob"},
          {git.ok(work, "rev-parse", "refs/tags/commit-tag").output().strip(), "tag"}
        }) {
      git.ok(
          work,
          "push",
          "-q",
          "--force",
          gateway.pushUrl(REPO, gateway.ownerToken),
          pointee[0] + ":" + proposal);
      String reason =
          proposal + " points at a " + pointee[1] + " (" + pointee[0] + "), not a commit";

      HttpResponse<String> diff = gateway.api("GET", jobPath + "/diff", gateway.ownerToken, null);
      assertEquals(409, diff.statusCode(), diff.body());
      assertTrue(new JsonObject(diff.body()).getString("error").startsWith(reason), diff.body());
      HttpResponse<String> approve =
          gateway.api(
              "POST",
              jobPath + "/approve",
              gateway.ownerToken,
              new JsonObject()
                  .put("branch", "agent/" + job.getJobId())
                  .put("sha", pointee[0])
                  .encode());
      assertEquals(409, approve.statusCode(), approve.body());
      assertTrue(
          new JsonObject(approve.body()).getString("error").startsWith(reason), approve.body());
    }
    assertFalse(
        git.refs(gateway.repoDir(REPO)).contains("refs/heads/agent/"), "no branch was created");
  }

  private static void assertSmall(String path, int maxBytes) throws Exception {
    HttpResponse<String> response = gateway.api("GET", path, gateway.ownerToken, null);
    assertEquals(200, response.statusCode(), response.body());
    int bytes = response.body().getBytes(java.nio.charset.StandardCharsets.UTF_8).length;
    assertTrue(bytes < maxBytes, path + " answered " + bytes + " bytes");
  }

  /**
   * Creates an exec job and takes its request (with its job token) from the runners' queue, as a
   * runner does.
   */
  private static JobRequest createJob() throws Exception {
    HttpResponse<String> created =
        gateway.api(
            "POST",
            "/api/v1/repos/" + REPO + "/agent-jobs",
            gateway.ownerToken,
            new JsonObject().put("task", "abuse the refs").put("exec", "true").encode());
    assertEquals(201, created.statusCode(), created.body());
    JetStreamSubscription queue =
        runner
            .jetStream()
            .subscribe(
                Subjects.jobRequests(Subjects.DEFAULT_IMAGE),
                PullSubscribeOptions.bind(
                    Subjects.JOBS_STREAM, Subjects.runnersConsumer(Subjects.DEFAULT_IMAGE)));
    List<Message> taken = queue.fetch(1, Duration.ofSeconds(10));
    assertEquals(1, taken.size(), "the job was queued");
    taken.get(0).ack();
    queue.unsubscribe();
    JobRequest request = JobRequest.parseFrom(taken.get(0).getData());
    assertEquals(new JsonObject(created.body()).getString("id"), request.getJobId());
    return request;
  }

  private static void awaitFinished(String jobPath) throws Exception {
    awaitJob(jobPath, job -> "finished".equals(job.getString("status")));
  }

  private static void awaitRefsWritten(String jobPath, int refs) throws Exception {
    awaitJob(jobPath, job -> job.getJsonArray("refs_written").size() == refs);
  }

  private static void awaitJob(String jobPath, java.util.function.Predicate<JsonObject> done)
      throws Exception {
    long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    JsonObject job = new JsonObject(gateway.api("GET", jobPath, gateway.ownerToken, null).body());
    while (!done.test(job) && System.nanoTime() < deadline) {
      Thread.sleep(100);
      job = new JsonObject(gateway.api("GET", jobPath, gateway.ownerToken, null).body());
    }
    assertTrue(done.test(job), job.encodePrettily());
  }
}
