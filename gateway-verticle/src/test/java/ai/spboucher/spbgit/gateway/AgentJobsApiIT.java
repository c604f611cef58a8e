package ai.spboucher.spbgit.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.spboucher.spbgit.proto.CodingAgent;
import ai.spboucher.spbgit.proto.JobRequest;
import ai.spboucher.spbgit.proto.JobStatus;
import ai.spboucher.spbgit.proto.Mode;
import ai.spboucher.spbgit.proto.StatusChange;
import ai.spboucher.spbgit.proto.Subjects;
import ai.spboucher.spbgit.testsupport.Stack;
import io.nats.client.Connection;
import io.nats.client.Message;
import io.nats.client.PullSubscribeOptions;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Which agent a job runs, from the owner's side: {@code agent} picks the coding agent of an llm job
 * (unknown names and an agent next to {@code exec} are 400s and record nothing), {@code exec} with
 * {@code model} gives an exec job the model endpoint, and the audit, the job's JSON and the queued
 * request say which agent and version, also after the gateway restarts. Real gateway, NATS and git;
 * the test takes the requests from the queue and reports the start as a runner does.
 */
class AgentJobsApiIT {

  private static final String REPO = "demo";
  private static final String JOBS = "/api/v1/repos/" + REPO + "/agent-jobs";

  @TempDir Path tmp;

  @Test
  void recordsTheAgentAndItsVersionAndTheModelEndpointOfExecJobsAcrossARestart() throws Exception {
    try (Stack stack =
        Stack.builder(tmp).nats().gateway(new JsonObject().put("model", "gpt-test")).start()) {
      Connection runner = stack.natsConnection();
      String claudeJob;
      String execJob;
      {
        TestGateway gateway = stack.gateway(TestGateway.class);
        stack.createRepo(REPO, "work");

        assertRefused(
            create(gateway, new JsonObject().put("task", "t").put("agent", "aider")),
            "unknown agent 'aider' (builtin, claude-code, codex, qwen-code)");
        assertRefused(
            create(
                gateway,
                new JsonObject().put("task", "t").put("exec", "true").put("agent", "codex")),
            "'agent' applies to llm jobs only; this job has an 'exec' command");
        assertRefused(
            create(
                gateway,
                new JsonObject().put("task", "t").put("exec", "true").put("model", "gpt-other")),
            "model 'gpt-other' is not allowed; allowed: gpt-test");
        assertEquals("[]", audit(gateway, null).encode(), "nothing was recorded");

        JsonObject claude =
            created(gateway, new JsonObject().put("task", "Fix it").put("agent", "claude-code"));
        claudeJob = claude.getString("id");
        assertEquals("llm", claude.getString("mode"));
        assertEquals("claude-code", claude.getString("agent"));
        assertEquals(CodingAgent.CLAUDE_CODE.pinnedVersion(), claude.getString("agent_version"));
        assertEquals(false, claude.getBoolean("exec_model"));
        JsonObject builtin = created(gateway, new JsonObject().put("task", "Fix it again"));
        assertEquals("builtin", builtin.getString("agent"));
        assertNull(builtin.getString("agent_version"));
        JsonObject exec =
            created(
                gateway,
                new JsonObject()
                    .put("task", "Run my own agent")
                    .put("exec", "my-agent --task \"$SPB_TASK\"")
                    .put("model", "gpt-test"));
        execJob = exec.getString("id");
        assertEquals("exec", exec.getString("mode"));
        assertEquals(true, exec.getBoolean("exec_model"));
        assertEquals("gpt-test", exec.getString("model"));
        assertNull(exec.getString("agent"));

        Map<String, JobRequest> requests = takeRequests(runner, 3);
        assertEquals("claude-code", requests.get(claudeJob).getAgent());
        assertEquals(Mode.MODE_LLM, requests.get(claudeJob).getMode());
        assertEquals("builtin", requests.get(builtin.getString("id")).getAgent());
        assertEquals(Mode.MODE_EXEC, requests.get(execJob).getMode());
        assertTrue(requests.get(execJob).getExecModel());
        assertEquals("gpt-test", requests.get(execJob).getModel());

        RunnerStandIn.publishStatus(
            runner,
            claudeJob,
            1,
            StatusChange.newBuilder()
                .setStatus(JobStatus.STARTED)
                .setRunnerId("r1")
                .setContainerId("c1")
                .setAgent("claude-code")
                .setAgentVersion("2.1.328-local")
                .build());
        RunnerStandIn.publishStatus(
            runner,
            claudeJob,
            2,
            StatusChange.newBuilder()
                .setStatus(JobStatus.FINISHED)
                .setExitReason("agent_unavailable")
                .setRunnerId("r1")
                .setDetail("claude-code speaks anthropic; this runner's provider is openai")
                .build());
        JsonObject finished = awaitFinished(gateway, claudeJob);
        assertEquals("agent_unavailable", finished.getString("exit_reason"));
        assertEquals("2.1.328-local", finished.getString("agent_version"), "the runner's wins");

        JsonArray entries = audit(gateway, claudeJob);
        JsonObject createdEntry = event(entries, "job_created");
        assertEquals("claude-code", createdEntry.getString("agent"));
        assertEquals(
            CodingAgent.CLAUDE_CODE.pinnedVersion(), createdEntry.getString("agent_version"));
        assertEquals(false, createdEntry.getBoolean("exec_model"));
        JsonObject startedEntry = event(entries, "job_started");
        assertEquals("claude-code", startedEntry.getString("agent"));
        assertEquals("2.1.328-local", startedEntry.getString("agent_version"));
        assertEquals(true, event(audit(gateway, execJob), "job_created").getBoolean("exec_model"));
      }

      stack.stopGateway();
      {
        TestGateway restarted = (TestGateway) stack.startGateway();
        restarted.awaitReady();
        JsonObject claude = job(restarted, claudeJob);
        assertEquals("claude-code", claude.getString("agent"));
        assertEquals("2.1.328-local", claude.getString("agent_version"));
        assertEquals("agent_unavailable", claude.getString("exit_reason"));
        JsonObject exec = job(restarted, execJob);
        assertEquals(true, exec.getBoolean("exec_model"));
        assertEquals("gpt-test", exec.getString("model"));
        JsonArray listed =
            new JsonArray(restarted.api("GET", JOBS, restarted.ownerToken, null).body());
        assertFalse(listed.isEmpty());
        for (Object each : listed) {
          assertTrue(((JsonObject) each).containsKey("agent"), listed.encodePrettily());
        }
      }
    }
  }

  private static HttpResponse<String> create(TestGateway gateway, JsonObject body)
      throws Exception {
    return gateway.api("POST", JOBS, gateway.ownerToken, body.encode());
  }

  private static JsonObject created(TestGateway gateway, JsonObject body) throws Exception {
    HttpResponse<String> response = create(gateway, body);
    assertEquals(201, response.statusCode(), response.body());
    return new JsonObject(response.body());
  }

  private static void assertRefused(HttpResponse<String> response, String error) {
    assertEquals(400, response.statusCode(), response.body());
    String said = new JsonObject(response.body()).getString("error");
    assertTrue(said.startsWith(error), said);
  }

  private static JsonObject job(TestGateway gateway, String id) throws Exception {
    HttpResponse<String> response = gateway.api("GET", JOBS + "/" + id, gateway.ownerToken, null);
    assertEquals(200, response.statusCode(), response.body());
    return new JsonObject(response.body());
  }

  private static JsonArray audit(TestGateway gateway, String job) throws Exception {
    String query = job == null ? "" : "?job=" + job;
    HttpResponse<String> response =
        gateway.api("GET", "/api/v1/agent-jobs" + query, gateway.ownerToken, null);
    assertEquals(200, response.statusCode(), response.body());
    return new JsonArray(response.body());
  }

  private static JsonObject event(JsonArray entries, String event) {
    return entries.stream()
        .map(JsonObject.class::cast)
        .filter(e -> event.equals(e.getString("event")))
        .findFirst()
        .orElseThrow(() -> new AssertionError("no " + event + " in " + entries.encodePrettily()));
  }

  /** Takes {@code count} job requests from the runners' queue, as a runner does, by job id. */
  private static Map<String, JobRequest> takeRequests(Connection runner, int count)
      throws Exception {
    var queue =
        runner
            .jetStream()
            .subscribe(
                Subjects.jobRequests(Subjects.DEFAULT_IMAGE),
                PullSubscribeOptions.bind(
                    Subjects.JOBS_STREAM, Subjects.runnersConsumer(Subjects.DEFAULT_IMAGE)));
    Map<String, JobRequest> taken = new HashMap<>();
    long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
    while (taken.size() < count && System.nanoTime() < deadline) {
      List<Message> messages = queue.fetch(count - taken.size(), Duration.ofSeconds(2));
      for (Message message : messages) {
        message.ack();
        JobRequest request = JobRequest.parseFrom(message.getData());
        taken.put(request.getJobId(), request);
      }
    }
    assertEquals(count, taken.size(), "the jobs were queued");
    return taken;
  }

  private static JsonObject awaitFinished(TestGateway gateway, String id) throws Exception {
    long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    JsonObject job = job(gateway, id);
    while (!"finished".equals(job.getString("status")) && System.nanoTime() < deadline) {
      Thread.sleep(100);
      job = job(gateway, id);
    }
    assertEquals("finished", job.getString("status"), job.encodePrettily());
    return job;
  }
}
