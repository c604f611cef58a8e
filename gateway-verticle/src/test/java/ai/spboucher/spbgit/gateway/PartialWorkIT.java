package ai.spboucher.spbgit.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.spboucher.spbgit.proto.JobRequest;
import ai.spboucher.spbgit.proto.JobStatus;
import ai.spboucher.spbgit.proto.Mode;
import ai.spboucher.spbgit.proto.StatusChange;
import ai.spboucher.spbgit.testsupport.GitCli;
import ai.spboucher.spbgit.testsupport.Stack;
import io.nats.client.Connection;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A job that hits a limit leaves its work as {@code refs/agents/<id>/partial}, never as the
 * proposal: the API shows that commit ({@code partial_sha}) and its diff ({@code ?ref=partial},
 * labelled), and refuses to approve it. The gateway, NATS and git are real; the test takes the job
 * from the queue and reports it as a runner does, and pushes with the job's own token as the
 * runner's git relay does.
 */
class PartialWorkIT {

  private static final String REPO = "demo";

  @TempDir Path tmp;

  @Test
  void aJobThatLeftOnlyPartialWorkShowsItsShaAndDiffButOffersNothingToApprove() throws Exception {
    try (Stack stack =
        Stack.builder(tmp).nats().gateway(new JsonObject().put("model", "gpt-test")).start()) {
      TestGateway gateway = stack.gateway(TestGateway.class);
      Connection runner = stack.natsConnection();
      GitCli git = stack.git();
      Path work = stack.createRepo(REPO, "work");
      String base = git.ok(work, "rev-parse", "HEAD").output().strip();
      String id =
          gateway
              .createJob(REPO, new JsonObject().put("task", "Greet in the README"))
              .getString("id");
      String jobPath = "/api/v1/repos/" + REPO + "/agent-jobs/" + id;

      JobRequest request = RunnerStandIn.takeRequest(runner);
      assertEquals(id, request.getJobId());
      assertEquals(Mode.MODE_LLM, request.getMode());
      RunnerStandIn.publishStarted(runner, id, "c0ffee");
      Files.writeString(work.resolve("README.md"), "hello work\nhello agent\n");
      git.ok(work, "commit", "-q", "-am", "Greet in the README\n\nAgent-Job: " + id);
      String partial = git.ok(work, "rev-parse", "HEAD").output().strip();
      git.ok(
          work,
          "push",
          "-q",
          gateway.pushUrl(REPO, RunnerStandIn.jobToken(gateway, request)),
          "HEAD:refs/agents/" + id + "/partial");
      RunnerStandIn.publishStatus(
          runner,
          id,
          2,
          StatusChange.newBuilder()
              .setStatus(JobStatus.FINISHED)
              .setExitReason("budget_exceeded")
              .setRunnerId("r1")
              .setContainerId("c0ffee")
              .setDetail("the agent stopped on the runner's breach notice")
              .setProvider("openai")
              .setModel("gpt-test")
              .setInputTokens(800)
              .setOutputTokens(200)
              .build());

      JsonObject job = gateway.awaitFinished(jobPath);
      assertEquals("budget_exceeded", job.getString("exit_reason"), job.encodePrettily());
      assertEquals(partial, job.getString("partial_sha"), job.encodePrettily());
      assertNull(job.getString("proposal_sha"));
      assertNull(job.getString("test_result"));
      assertTrue(
          job.getJsonArray("refs_written").encode().contains("refs/agents/" + id + "/partial"),
          job.encodePrettily());
      for (String list : List.of("/api/v1/repos/" + REPO + "/agent-jobs", "/api/v1/jobs")) {
        JsonObject listed =
            new JsonArray(gateway.api("GET", list, gateway.ownerToken, null).body())
                .getJsonObject(0);
        assertEquals(partial, listed.getString("partial_sha"), list);
      }

      HttpResponse<String> noProposal =
          gateway.api("GET", jobPath + "/diff", gateway.ownerToken, null);
      assertEquals(404, noProposal.statusCode(), noProposal.body());
      assertEquals(
          "job " + id + " has no proposal; its partial work is at ?ref=partial",
          new JsonObject(noProposal.body()).getString("error"));
      HttpResponse<String> response =
          gateway.api("GET", jobPath + "/diff?ref=partial", gateway.ownerToken, null);
      assertEquals(200, response.statusCode(), response.body());
      JsonObject diff = new JsonObject(response.body());
      assertEquals("refs/agents/" + id + "/partial", diff.getString("ref"));
      assertEquals("partial", diff.getString("kind"));
      assertEquals(partial, diff.getString("head"));
      assertEquals(base, diff.getString("base"));
      JsonArray files = diff.getJsonArray("files");
      assertEquals(1, files.size(), diff.encodePrettily());
      JsonObject readme = files.getJsonObject(0);
      assertEquals("README.md", readme.getString("path"));
      assertEquals(1, readme.getInteger("additions"));
      assertEquals(0, readme.getInteger("deletions"));
      assertEquals(
          List.of("context hello work", "add hello agent"),
          readme.getJsonArray("hunks").getJsonObject(0).getJsonArray("lines").stream()
              .map(JsonObject.class::cast)
              .map(l -> l.getString("type") + " " + l.getString("text"))
              .toList());

      HttpResponse<String> approve =
          gateway.api(
              "POST",
              jobPath + "/approve",
              gateway.ownerToken,
              new JsonObject().put("branch", "agent/" + id).put("sha", partial).encode());
      assertEquals(409, approve.statusCode(), approve.body());
      assertEquals(
          "job "
              + id
              + " has no proposal to approve; its partial work (refs/agents/"
              + id
              + "/partial) is for review only and cannot be approved",
          new JsonObject(approve.body()).getString("error"));
      assertFalse(
          git.refs(gateway.repoDir(REPO)).contains("refs/heads/agent/"), "no branch was created");
      assertNull(
          new JsonObject(gateway.api("GET", jobPath, gateway.ownerToken, null).body())
              .getValue("decision"));
    }
  }
}
