package ai.spboucher.spbgit.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.spboucher.spbgit.gateway.RunnerStandIn;
import ai.spboucher.spbgit.gateway.TestGateway;
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
import java.util.Comparator;
import java.util.stream.Stream;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * nats-server and a gateway on it that takes llm jobs (model {@code gpt-test}), with repository
 * {@link #REPO} pushed from a work tree, for the ITs that play the runner themselves (through
 * {@link #runner}'s connection). Like a Testcontainers container in a static field, one serves a
 * whole test class: {@code @RegisterExtension static final GatewayOnNats bed = new
 * GatewayOnNats();} starts it in a directory of its own before the first test, and closes and
 * removes it after the last.
 */
final class GatewayOnNats implements BeforeAllCallback, AfterAllCallback {

  static final String REPO = "demo";

  Stack stack;
  TestGateway gateway;

  /** The test's own NATS connection, to take job requests and report as a runner does. */
  Connection runner;

  GitCli git;

  /** A work tree of {@link #REPO}; {@code main} is pushed. */
  Path work;

  private Path dir;

  @Override
  public void beforeAll(ExtensionContext context) throws Exception {
    dir = Files.createTempDirectory("spbgit-cli-it");
    stack = Stack.builder(dir).nats().gateway(new JsonObject().put("model", "gpt-test")).start();
    gateway = stack.gateway(TestGateway.class);
    runner = stack.natsConnection();
    git = stack.git();
    work = stack.createRepo(REPO, REPO);
  }

  /**
   * Reports job {@code id} started on runner r1 (its first status event), as a runner does, with
   * what {@code started} adds (the agent, say).
   */
  void reportStarted(String id, StatusChange.Builder started) throws Exception {
    RunnerStandIn.publishStatus(
        runner,
        id,
        1,
        started.setStatus(JobStatus.STARTED).setRunnerId("r1").setContainerId("c0ffee").build());
    // The gateway records status events from its own consumer: the job shows started a moment
    // later.
    long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    while (!"started".equals(job(id).getString("status"))) {
      assertTrue(System.nanoTime() < deadline, "job " + id + " did not show started: " + job(id));
      Thread.sleep(50);
    }
  }

  /** Reports job {@code id} finished ok (its second status event), as a runner does. */
  void reportFinishedOk(String id) throws Exception {
    RunnerStandIn.publishFinishedOk(runner, id, "c0ffee");
  }

  @Override
  public void afterAll(ExtensionContext context) throws Exception {
    if (stack != null) {
      stack.close();
    }
    if (dir != null) {
      try (Stream<Path> paths = Files.walk(dir)) {
        for (Path path : paths.sorted(Comparator.reverseOrder()).toList()) {
          Files.delete(path);
        }
      }
    }
  }

  /** {@code spbgit} as the owner of this gateway. */
  CliProcess owner() throws Exception {
    return CliProcess.owner(dir.resolve("cli-home"), gateway);
  }

  /** Creates a job of {@link #REPO} through the API as the owner; its id. */
  String createJob(JsonObject body) throws Exception {
    HttpResponse<String> response =
        gateway.api(
            "POST", "/api/v1/repos/" + REPO + "/agent-jobs", gateway.ownerToken, body.encode());
    assertEquals(201, response.statusCode(), response.body());
    return new JsonObject(response.body()).getString("id");
  }

  /** The job as the API shows it to the owner. */
  JsonObject job(String id) throws Exception {
    HttpResponse<String> response = gateway.api("GET", jobPath(id), gateway.ownerToken, null);
    assertEquals(200, response.statusCode(), response.body());
    return new JsonObject(response.body());
  }

  static String jobPath(String id) {
    return "/api/v1/repos/" + REPO + "/agent-jobs/" + id;
  }

  /**
   * Commits the work tree's changes as job {@code id}'s work and pushes them with {@code token} as
   * its proposal; the commit.
   */
  String pushProposal(String id, String message, String token) throws Exception {
    git.ok(work, "commit", "-q", "-am", message + "\n\nAgent-Job: " + id);
    String sha = git.ok(work, "rev-parse", "HEAD").output().strip();
    git.ok(
        work, "push", "-q", gateway.pushUrl(REPO, token), "HEAD:refs/agents/" + id + "/proposal");
    return sha;
  }
}
