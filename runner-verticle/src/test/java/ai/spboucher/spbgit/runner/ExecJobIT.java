package ai.spboucher.spbgit.runner;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.spboucher.spbgit.testsupport.GitCli;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The whole flow in exec mode: job POST, queue, runner, container, proposal ref, audit log. */
class ExecJobIT {

  @TempDir static Path tmp;
  static JobTestBed bed;

  @BeforeAll
  static void start() throws Exception {
    bed = JobTestBed.start(tmp, "60s");
    bed.startRunner("r1", Map.of());
    bed.createRepo("demo", Map.of("README.md", "hello\n"));
  }

  @AfterAll
  static void stop() throws Exception {
    bed.close();
  }

  @Test
  void execJobPushesAReviewableProposal() throws Exception {
    JsonObject job =
        bed.submit(
            "demo", "echo 'Hello from the agent' > greeting.txt", "grep -q Hello greeting.txt");
    assertEquals("dispatched", job.getString("status"));
    String id = job.getString("id");
    assertTrue(id.matches("[a-z0-9-]+"), id);

    JsonObject done = bed.awaitFinished("demo", id);
    String log = bed.log(id);
    assertEquals("ok", done.getString("exit_reason"), log);
    assertTrue(log.contains("tests passed"), log);

    String refs = bed.git.refs(bed.gateway.repoDir("demo"));
    assertTrue(refs.contains("refs/agents/" + id + "/proposal"), refs);
    GitCli.Result message =
        bed.git.ok(
            bed.gateway.repoDir("demo"),
            "log",
            "-1",
            "--format=%B",
            "refs/agents/" + id + "/proposal");
    assertTrue(message.output().contains("Agent-Job: " + id), message.output());
    GitCli.Result diff =
        bed.git.ok(
            bed.gateway.repoDir("demo"),
            "diff",
            "--stat",
            "main",
            "refs/agents/" + id + "/proposal");
    assertTrue(diff.output().contains("greeting.txt"), diff.output());
    assertFalse(bed.containerExists(id), "the container is removed");

    JsonArray refsWritten = done.getJsonArray("refs_written");
    assertEquals("refs/agents/" + id + "/proposal", refsWritten.getJsonObject(0).getString("ref"));
    List<String> events =
        new JsonArray(
                bed.gateway
                    .api("GET", "/api/v1/agent-jobs?job=" + id, bed.gateway.ownerToken, null)
                    .body())
            .stream().map(e -> ((JsonObject) e).getString("event")).toList();
    // The runner's start event and the push's post-receive record race; both fall between dispatch
    // and end.
    assertEquals(List.of("job_created", "job_dispatched"), events.subList(0, 2));
    assertEquals(
        java.util.Set.of("job_started", "refs_written"),
        java.util.Set.copyOf(events.subList(2, 4)));
    assertEquals(List.of("job_finished"), events.subList(4, events.size()));
  }

  @Test
  void metricsCountTheJobsDispatchAndItsEnd() throws Exception {
    String ok = "spb_jobs_finished_total{exit_reason=\"ok\"}";
    String dispatched = "spb_job_dispatch_seconds_count";
    Map<String, Double> before = bed.gateway.metrics();
    String id = bed.submit("demo", "true", null).getString("id");
    assertEquals("ok", bed.awaitFinished("demo", id).getString("exit_reason"), bed.log(id));
    JobTestBed.awaitCondition(
        "the job's dispatch and end in /metrics",
        Duration.ofSeconds(10),
        () -> bed.gateway.metrics().getOrDefault(ok, 0.0) == before.getOrDefault(ok, 0.0) + 1);
    Map<String, Double> after = bed.gateway.metrics();
    assertEquals(
        before.getOrDefault(dispatched, 0.0) + 1, after.get(dispatched), "one more dispatch timed");
    assertTrue(
        after.get("spb_job_dispatch_seconds_sum")
            > before.getOrDefault("spb_job_dispatch_seconds_sum", 0.0),
        "its latency added: " + after);
    assertEquals(
        before.get("spb_jobs{status=\"finished\"}") + 1,
        after.get("spb_jobs{status=\"finished\"}"));
  }

  @Test
  void jobWithoutChangesEndsOkWithoutProposal() throws Exception {
    String id = bed.submit("demo", "true", null).getString("id");
    JsonObject done = bed.awaitFinished("demo", id);
    String log = bed.log(id);
    assertEquals("ok", done.getString("exit_reason"), log);
    assertTrue(log.contains("no changes"), log);
    assertFalse(bed.git.refs(bed.gateway.repoDir("demo")).contains("refs/agents/" + id + "/"));
  }

  @Test
  void failingCommandEndsWithItsExitCode() throws Exception {
    String id = bed.submit("demo", "exit 7", null).getString("id");
    assertEquals("exit_code:7", bed.awaitFinished("demo", id).getString("exit_reason"));
  }
}
