package ai.spboucher.spbgit.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.spboucher.spbgit.proto.JobRequest;
import ai.spboucher.spbgit.proto.JobStatus;
import ai.spboucher.spbgit.proto.StatusChange;
import ai.spboucher.spbgit.testsupport.GitCli;
import ai.spboucher.spbgit.testsupport.Stack;
import io.nats.client.Connection;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Best-of-N: {@code attempts: 3} starts three ordinary sibling jobs (own id, token and refs, each
 * token scoped to its own job), the group page's API compares them, and approving one supersedes
 * the others, in the audit log and so across a restart. The gateway, NATS and git are real; the
 * test plays the runner (queued requests, status events, pushes with each job's token).
 */
class JobGroupsIT {

  private static final String REPO = "demo";

  @TempDir Path tmp;

  @Test
  void threeAttemptsRunAsOrdinaryJobsAndApprovingOneSupersedesTheOthers() throws Exception {
    List<String> ids = new ArrayList<>();
    String group;
    try (Stack stack =
        Stack.builder(tmp).nats().gateway(new JsonObject().put("model", "gpt-test")).start()) {
      GitCli git = stack.git();
      {
        TestGateway gateway = stack.gateway(TestGateway.class);
        Connection runner = stack.natsConnection();
        Path work = stack.createRepo(REPO, "work");
        String jobs = "/api/v1/repos/" + REPO + "/agent-jobs";

        for (Object bad : List.of(0, 5, "two")) {
          HttpResponse<String> refused =
              gateway.api(
                  "POST",
                  jobs,
                  gateway.ownerToken,
                  new JsonObject().put("task", "Greet").put("attempts", bad).encode());
          assertEquals(400, refused.statusCode(), bad + ": " + refused.body());
          assertTrue(
              new JsonObject(refused.body()).getString("error").contains("attempts"),
              refused.body());
        }
        assertEquals(
            0,
            new JsonArray(gateway.api("GET", jobs, gateway.ownerToken, null).body()).size(),
            "a refused request created no job");

        HttpResponse<String> created =
            gateway.api(
                "POST",
                jobs,
                gateway.ownerToken,
                new JsonObject().put("task", "Greet in the README").put("attempts", 3).encode());
        assertEquals(201, created.statusCode(), created.body());
        JsonObject answer = new JsonObject(created.body());
        group = answer.getString("group");
        answer.getJsonArray("jobs").forEach(id -> ids.add((String) id));
        assertEquals(3, new HashSet<>(ids).size(), answer.encode());

        List<JobRequest> requests = new ArrayList<>();
        for (String id : ids) {
          requests.add(RunnerStandIn.queuedRequest(runner, gateway, id));
          assertEquals(group, gateway.auditEntry(id, "job_created").getString("group"));
          JsonObject job =
              new JsonObject(gateway.api("GET", jobs + "/" + id, gateway.ownerToken, null).body());
          assertEquals(group, job.getString("group"), job.encodePrettily());
        }
        Set<String> tokens = new HashSet<>();
        for (JobRequest request : requests) {
          assertEquals("Greet in the README", request.getTask());
          assertEquals(requests.get(0).getBaseSha(), request.getBaseSha());
          assertEquals(requests.get(0).getBaseRef(), request.getBaseRef());
          assertEquals(requests.get(0).getEnvironment(), request.getEnvironment());
          tokens.add(RunnerStandIn.jobToken(gateway, request));
        }
        assertEquals(3, tokens.size(), "each attempt has its own token");

        String groupPath = "/api/v1/repos/" + REPO + "/agent-groups/" + group;
        for (Object queued : groupAnswer(gateway, groupPath).getJsonArray("jobs")) {
          JsonObject attempt = (JsonObject) queued;
          assertTrue(attempt.containsKey("diff_stat"), attempt.encode());
          assertNull(attempt.getValue("diff_stat"), "nothing pushed yet: " + attempt.encode());
        }

        // Each attempt pushes its own proposal with its own token; the first one's token cannot
        // write the second one's refs. Their changes differ in size, so the diff stats tell them
        // apart: README.md is "hello work\n" on main.
        List<String> proposals = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
          String id = ids.get(i);
          start(runner, id);
          git.ok(work, "checkout", "-q", "-B", "attempt-" + i, "main");
          switch (i) {
            case 0 -> Files.writeString(work.resolve("README.md"), "hello work\nattempt 0\n");
            case 1 -> {
              Files.writeString(work.resolve("README.md"), "hello work\nattempt 1\n");
              Files.writeString(work.resolve("NOTES.md"), "one\ntwo\n");
              git.ok(work, "add", "NOTES.md");
            }
            default -> Files.writeString(work.resolve("README.md"), "attempt 2\n");
          }
          git.ok(work, "commit", "-q", "-am", "Greet in the README\n\nAgent-Job: " + id);
          proposals.add(git.ok(work, "rev-parse", "HEAD").output().strip());
          if (i == 1) {
            var foreign =
                git.run(
                    work,
                    "push",
                    gateway.pushUrl(REPO, RunnerStandIn.jobToken(gateway, requests.get(0))),
                    "HEAD:refs/agents/" + id + "/proposal");
            assertFalse(foreign.ok(), foreign.output());
            assertFalse(
                git.refs(gateway.repoDir(REPO)).contains("refs/agents/" + id + "/proposal"),
                "job 0's token wrote nothing for job 1");
          }
          git.ok(
              work,
              "push",
              "-q",
              gateway.pushUrl(REPO, RunnerStandIn.jobToken(gateway, requests.get(i))),
              "HEAD:refs/agents/" + id + "/proposal");
          finish(runner, id, 100 + i);
          gateway.awaitFinished(jobs + "/" + id);
        }

        JsonObject compared = groupAnswer(gateway, groupPath);
        assertEquals(group, compared.getString("group"), compared.encodePrettily());
        assertEquals("Greet in the README", compared.getString("task"));
        JsonArray attempts = compared.getJsonArray("jobs");
        assertEquals(ids, attempts.stream().map(a -> ((JsonObject) a).getString("id")).toList());
        for (int i = 0; i < 3; i++) {
          JsonObject attempt = attempts.getJsonObject(i);
          assertEquals("finished", attempt.getString("status"));
          assertEquals("ok", attempt.getString("exit_reason"));
          assertEquals(proposals.get(i), attempt.getString("proposal_sha"));
          assertEquals(100L + i, attempt.getLong("input_tokens"), attempt.encode());
          assertEquals(
              "/repos/" + REPO + "/agent-jobs/" + ids.get(i), attempt.getString("proposal_page"));
        }
        List<JsonObject> diffStats =
            List.of(diffStat(1, 1, 0), diffStat(2, 3, 0), diffStat(1, 1, 1));
        assertEquals(
            diffStats,
            attempts.stream().map(a -> ((JsonObject) a).getJsonObject("diff_stat")).toList(),
            attempts.encodePrettily());
        assertEquals(
            404,
            gateway
                .api(
                    "GET",
                    "/api/v1/repos/" + REPO + "/agent-groups/nogroup",
                    gateway.ownerToken,
                    null)
                .statusCode());

        String winner = ids.get(1);
        HttpResponse<String> approved =
            gateway.api(
                "POST",
                jobs + "/" + winner + "/approve",
                gateway.ownerToken,
                new JsonObject().put("branch", "agent/best").put("sha", proposals.get(1)).encode());
        assertEquals(200, approved.statusCode(), approved.body());
        assertDecided(gateway, ids, winner);
        for (String id : List.of(ids.get(0), ids.get(2))) {
          JsonObject entry = gateway.auditEntry(id, "job_superseded");
          assertEquals(winner, entry.getString("superseded_by"), entry.encode());
          assertEquals(group, entry.getString("group"));
          assertTrue(
              git.refs(gateway.repoDir(REPO)).contains("refs/agents/" + id + "/proposal"),
              "a superseded attempt's proposal is kept until deleted");
        }
        HttpResponse<String> loser =
            gateway.api(
                "POST",
                jobs + "/" + ids.get(0) + "/approve",
                gateway.ownerToken,
                new JsonObject()
                    .put("branch", "agent/other")
                    .put("sha", proposals.get(0))
                    .encode());
        assertEquals(409, loser.statusCode(), loser.body());
        assertTrue(new JsonObject(loser.body()).getString("error").contains("superseded"));
        HttpResponse<String> rejected =
            gateway.api("POST", jobs + "/" + ids.get(2) + "/reject", gateway.ownerToken, "{}");
        assertEquals(409, rejected.statusCode(), rejected.body());
        assertTrue(new JsonObject(rejected.body()).getString("error").contains("superseded"));
      }
      // The decisions are in the audit log: a restarted gateway replays them.
      stack.stopGateway();
      {
        TestGateway restarted = (TestGateway) stack.startGateway();
        assertDecided(restarted, ids, ids.get(1));
        assertEquals(
            3,
            new JsonObject(
                    restarted
                        .api(
                            "GET",
                            "/api/v1/repos/" + REPO + "/agent-groups/" + group,
                            restarted.ownerToken,
                            null)
                        .body())
                .getJsonArray("jobs")
                .size());
      }
    }
  }

  @Test
  void oneAttemptKeepsTheLoneJobAnswer() throws Exception {
    try (Stack stack =
        Stack.builder(tmp).nats().gateway(new JsonObject().put("model", "gpt-test")).start()) {
      TestGateway gateway = stack.gateway(TestGateway.class);
      GitCli git = stack.git();
      Path work = stack.createRepo(REPO, "work");
      HttpResponse<String> created =
          gateway.api(
              "POST",
              "/api/v1/repos/" + REPO + "/agent-jobs",
              gateway.ownerToken,
              new JsonObject().put("task", "Greet").put("attempts", 1).encode());
      assertEquals(201, created.statusCode(), created.body());
      JsonObject job = new JsonObject(created.body());
      assertNotEquals(null, job.getString("id"), job.encode());
      assertTrue(job.containsKey("group"), job.encode());
      assertNull(job.getValue("group"));
    }
  }

  private static JsonObject groupAnswer(TestGateway gateway, String groupPath) throws Exception {
    HttpResponse<String> answer = gateway.api("GET", groupPath, gateway.ownerToken, null);
    assertEquals(200, answer.statusCode(), answer.body());
    return new JsonObject(answer.body());
  }

  private static JsonObject diffStat(int files, int additions, int deletions) {
    return new JsonObject()
        .put("files", files)
        .put("additions", additions)
        .put("deletions", deletions)
        .put("truncated", false);
  }

  private static void assertDecided(TestGateway gateway, List<String> ids, String winner)
      throws Exception {
    for (String id : ids) {
      JsonObject job =
          new JsonObject(
              gateway
                  .api(
                      "GET",
                      "/api/v1/repos/" + REPO + "/agent-jobs/" + id,
                      gateway.ownerToken,
                      null)
                  .body());
      JsonObject decision = job.getJsonObject("decision");
      if (id.equals(winner)) {
        assertEquals("approved", decision.getString("decision"), job.encodePrettily());
      } else {
        assertEquals("superseded", decision.getString("decision"), job.encodePrettily());
        assertEquals(winner, decision.getString("superseded_by"));
      }
    }
  }

  private static void start(Connection runner, String id) throws Exception {
    RunnerStandIn.publishStarted(runner, id, "c-" + id);
  }

  private static void finish(Connection runner, String id, long inputTokens) throws Exception {
    RunnerStandIn.publishStatus(
        runner,
        id,
        2,
        StatusChange.newBuilder()
            .setStatus(JobStatus.FINISHED)
            .setExitReason("ok")
            .setRunnerId("r1")
            .setContainerId("c-" + id)
            .setProvider("openai")
            .setModel("gpt-test")
            .setInputTokens(inputTokens)
            .setOutputTokens(10)
            .build());
  }
}
