package ai.spboucher.spbgit.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.spboucher.spbgit.gateway.audit.AuditLog;
import ai.spboucher.spbgit.proto.AuditChain;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A gateway that crashed between recording a job ({@code job_created}) and recording that the queue
 * stored it ({@code job_dispatched}): the job was never acknowledged, and its token is not kept
 * anywhere to queue it again. The next start ends it with a recorded reason and revokes its token,
 * once.
 */
class InterruptedJobCreationIT {

  private static final String JOB = "mx2cut0f-f1rs";

  @TempDir Path tmp;

  @Test
  void aJobCreatedButNeverQueuedEndsRunnerErrorWhenTheGatewayStarts() throws Exception {
    Path data = tmp.resolve("data");
    Instant now = Instant.now();
    try (AuditLog log = AuditLog.open(data.resolve("agent-jobs.jsonl"), Clock.systemUTC())) {
      log.append(
          new JsonObject()
              .put("event", "job_created")
              .put("job", JOB)
              .put("repo", "demo")
              .put("requester", "pat_0123456789ab")
              .put("task", "cut off")
              .put("exec", "true")
              .put("test_command", "")
              .put("base", "main")
              .put("mode", "exec")
              .put("provider", (String) null)
              .put("model", (String) null)
              .put("token_id", "cut-off-token-id")
              .put("token_expires", now.plus(Duration.ofMinutes(42)).toString())
              .put("deadline", now.plus(Duration.ofMinutes(40)).toString()));
    }
    JsonObject noNats = new JsonObject().put("natsUrl", "nats://127.0.0.1:" + freePort());

    try (TestGateway gateway = TestGateway.start(data, noNats)) {
      JsonObject job = awaitFinished(gateway);
      assertEquals("runner_error", job.getString("exit_reason"), job.encodePrettily());
      assertEquals("the gateway stopped before the job was queued", job.getString("detail"));
      assertTrue(
          Files.readString(data.resolve("revoked-job-tokens.json")).contains("cut-off-token-id"),
          "its token is revoked");
    }
    try (TestGateway gateway = TestGateway.start(data, noNats)) {
      assertEquals("finished", jobs(gateway).getJsonObject(0).getString("status"));
    }
    assertEquals(
        List.of("job_created", "job_finished"),
        Files.readAllLines(data.resolve("agent-jobs.jsonl")).stream()
            .map(line -> new JsonObject(line).getString("event"))
            .toList(),
        "ended once, on the first start");
    AuditChain.Result chain = AuditLog.verify(data.resolve("agent-jobs.jsonl"));
    assertTrue(chain.ok(), chain.message());
  }

  private static JsonObject awaitFinished(TestGateway gateway) throws Exception {
    long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
    JsonObject job = jobs(gateway).getJsonObject(0);
    while (!"finished".equals(job.getString("status")) && System.nanoTime() < deadline) {
      Thread.sleep(100);
      job = jobs(gateway).getJsonObject(0);
    }
    assertEquals("finished", job.getString("status"), job.encodePrettily());
    return job;
  }

  private static JsonArray jobs(TestGateway gateway) throws Exception {
    return new JsonArray(gateway.api("GET", "/api/v1/jobs", gateway.ownerToken, null).body());
  }

  private static int freePort() throws Exception {
    try (ServerSocket socket = new ServerSocket(0)) {
      return socket.getLocalPort();
    }
  }
}
