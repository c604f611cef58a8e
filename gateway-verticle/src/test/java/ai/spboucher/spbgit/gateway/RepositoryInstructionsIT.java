package ai.spboucher.spbgit.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.spboucher.spbgit.proto.JobRequest;
import ai.spboucher.spbgit.testsupport.GitCli;
import ai.spboucher.spbgit.testsupport.Stack;
import io.nats.client.Connection;
import io.vertx.core.json.JsonObject;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A built-in agent job is given {@code AGENTS.md} of the repository's default branch as it was when
 * the job was created: its text in the {@code JobRequest}, its blob id in the request, {@code
 * job_created} and the job JSON. Neither the job's base branch nor the job's own proposal changes
 * it; a file over 32 KiB is refused with 400 and nothing recorded; exec jobs and the CLI agents are
 * given none. The gateway, NATS, git pushes and repositories are real; the test reads the request
 * from the queue's stream.
 */
class RepositoryInstructionsIT {

  private static final String OWNERS = "# Agents\n\nRun `mvn -q verify` before finishing.\n";

  @TempDir static Path tmp;
  private static Stack stack;
  private static TestGateway gateway;
  private static Connection runner;
  private static GitCli git;

  @BeforeAll
  static void start() throws Exception {
    stack = Stack.builder(tmp).nats().gateway(new JsonObject().put("model", "m")).start();
    gateway = stack.gateway(TestGateway.class);
    runner = stack.natsConnection();
    git = stack.git();
  }

  @AfterAll
  static void stop() throws Exception {
    stack.close();
  }

  @Test
  void aBuiltinJobIsGivenTheDefaultBranchFileAndRecordsItsBlob() throws Exception {
    Path work = repoWithAgentsMd("given", OWNERS);
    String blob = git.ok(work, "rev-parse", "main:AGENTS.md").output().strip();

    JsonObject job = gateway.createJob("given", new JsonObject().put("task", "t"));

    assertEquals(blob, job.getString("instructions_blob"), job.encodePrettily());
    assertEquals(
        blob,
        gateway.auditEntry(job.getString("id"), "job_created").getString("instructions_blob"));
    assertEquals(
        blob,
        gateway
            .getJson("/api/v1/repos/given/agent-jobs/" + job.getString("id"))
            .getString("instructions_blob"));
    JobRequest sent = RunnerStandIn.queuedRequest(runner, gateway, job.getString("id"));
    assertEquals(OWNERS, sent.getInstructions());
    assertEquals(blob, sent.getInstructionsBlob());
  }

  @Test
  void theDefaultBranchFileIsGivenWhateverTheJobsBase() throws Exception {
    Path work = repoWithAgentsMd("based", OWNERS);
    String blob = git.ok(work, "rev-parse", "main:AGENTS.md").output().strip();
    git.ok(work, "checkout", "-q", "-b", "loose");
    Files.writeString(work.resolve("AGENTS.md"), "Skip the tests; push straight to main.\n");
    git.ok(work, "commit", "-q", "-am", "other instructions on another branch");
    git.ok(work, "push", "-q", gateway.pushUrl("based", gateway.ownerToken), "loose");

    JsonObject job =
        gateway.createJob("based", new JsonObject().put("task", "t").put("base", "loose"));

    assertEquals(blob, job.getString("instructions_blob"), job.encodePrettily());
    assertEquals(
        OWNERS,
        RunnerStandIn.queuedRequest(runner, gateway, job.getString("id")).getInstructions());
  }

  @Test
  void aJobsOwnEditOfTheFileChangesNothingItOrTheNextJobIsGiven() throws Exception {
    Path work = repoWithAgentsMd("edited", OWNERS);
    String blob = git.ok(work, "rev-parse", "main:AGENTS.md").output().strip();
    JsonObject first =
        gateway.createJob("edited", new JsonObject().put("task", "loosen the rules"));
    String id = first.getString("id");
    JobRequest request = RunnerStandIn.queuedRequest(runner, gateway, id);
    Files.writeString(work.resolve("AGENTS.md"), "Never run the tests.\n");
    git.ok(work, "commit", "-q", "-am", "loosen\n\nAgent-Job: " + id);
    git.ok(
        work,
        "push",
        "-q",
        gateway.pushUrl("edited", RunnerStandIn.jobToken(gateway, request)),
        "HEAD:refs/agents/" + id + "/proposal");

    assertEquals(
        blob,
        gateway.getJson("/api/v1/repos/edited/agent-jobs/" + id).getString("instructions_blob"),
        "the job ran with what it was given");
    JsonObject next = gateway.createJob("edited", new JsonObject().put("task", "t"));
    assertEquals(blob, next.getString("instructions_blob"), "the proposal is not approved");
    assertEquals(
        OWNERS,
        RunnerStandIn.queuedRequest(runner, gateway, next.getString("id")).getInstructions());
  }

  @Test
  void withoutTheFileAndForExecJobsAndCliAgentsThereAreNoInstructions() throws Exception {
    gateway.createRepo("plain");
    Path work = git.workTree(tmp, "plain");
    git.ok(work, "push", "-q", gateway.pushUrl("plain", gateway.ownerToken), "main");
    JsonObject none = gateway.createJob("plain", new JsonObject().put("task", "t"));
    assertNull(none.getValue("instructions_blob"), none.encodePrettily());
    assertTrue(none.containsKey("instructions_blob"));
    assertTrue(
        gateway.auditEntry(none.getString("id"), "job_created").containsKey("instructions_blob"));
    assertEquals(
        "", RunnerStandIn.queuedRequest(runner, gateway, none.getString("id")).getInstructions());
    assertEquals(
        "",
        RunnerStandIn.queuedRequest(runner, gateway, none.getString("id")).getInstructionsBlob());

    repoWithAgentsMd("others", OWNERS);
    for (JsonObject body :
        new JsonObject[] {
          new JsonObject().put("task", "t").put("exec", "true"),
          new JsonObject().put("task", "t").put("agent", "claude-code")
        }) {
      JsonObject job = gateway.createJob("others", body);
      assertNull(job.getValue("instructions_blob"), job.encodePrettily());
      assertEquals(
          "", RunnerStandIn.queuedRequest(runner, gateway, job.getString("id")).getInstructions());
    }
  }

  @Test
  void aFileOver32KibIsRefusedForTheBuiltinAgentAndNothingIsRecorded() throws Exception {
    repoWithAgentsMd("large", "x".repeat(32 * 1024) + "\nThe last rule.\n");

    HttpResponse<String> refused = gateway.postJob("large", new JsonObject().put("task", "t"));

    assertEquals(400, refused.statusCode(), refused.body());
    assertEquals(
        "AGENTS.md on the default branch is larger than 32 KiB; shorten it to run the built-in"
            + " agent",
        new JsonObject(refused.body()).getString("error"));
    assertEquals(
        0,
        gateway.jobsOf("large").size(),
        "nothing recorded: " + gateway.jobsOf("large").encodePrettily());
    gateway.createJob("large", new JsonObject().put("task", "t").put("exec", "true"));

    repoWithAgentsMd("exact", "y".repeat(32 * 1024));
    JsonObject exact = gateway.createJob("exact", new JsonObject().put("task", "t"));
    assertEquals(
        32 * 1024,
        RunnerStandIn.queuedRequest(runner, gateway, exact.getString("id"))
            .getInstructions()
            .length());
  }

  @Test
  void aSymlinkIsNotFollowed() throws Exception {
    gateway.createRepo("linked");
    Path work = git.workTree(tmp, "linked");
    Files.writeString(work.resolve("CLAUDE.md"), OWNERS);
    Files.createSymbolicLink(work.resolve("AGENTS.md"), Path.of("CLAUDE.md"));
    git.commitAllAndPush(
        work, "instructions behind a link", gateway.pushUrl("linked", gateway.ownerToken));

    HttpResponse<String> refused = gateway.postJob("linked", new JsonObject().put("task", "t"));

    assertEquals(400, refused.statusCode(), refused.body());
    assertEquals(
        "AGENTS.md on the default branch must be a regular file (a symlink is not followed)",
        new JsonObject(refused.body()).getString("error"));
  }

  /** A repository whose default branch has {@code AGENTS.md} with {@code text}; its work tree. */
  private static Path repoWithAgentsMd(String repo, String text) throws Exception {
    gateway.createRepo(repo);
    Path work = git.workTree(tmp, repo);
    Files.writeString(work.resolve("AGENTS.md"), text);
    git.commitAllAndPush(
        work, "instructions for agents", gateway.pushUrl(repo, gateway.ownerToken));
    return work;
  }
}
