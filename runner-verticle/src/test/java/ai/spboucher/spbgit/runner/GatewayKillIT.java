package ai.spboucher.spbgit.runner;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.spboucher.spbgit.common.EcKeys;
import ai.spboucher.spbgit.gateway.audit.AuditLog;
import ai.spboucher.spbgit.proto.AuditChain;
import ai.spboucher.spbgit.testsupport.GatewayProcess;
import ai.spboucher.spbgit.testsupport.GitCli;
import ai.spboucher.spbgit.testsupport.NatsServer;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * The gateway process killed with SIGKILL, like a crash or the OOM killer: once while a job runs,
 * and once in the middle of a burst of job creations, each of which appends to the audit log. After
 * a restart on the same data directory the audit log verifies, every job the API acknowledged (201)
 * is there exactly once, every job reaches a final state with a recorded reason, and a job's log is
 * complete.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
@ExtendWith(GatewayDiagnostics.class)
class GatewayKillIT implements GatewayDiagnostics.RunsGateway {

  @TempDir Path tmp;
  private NatsServer nats;
  private GatewayProcess gateway;
  private Vertx runner;

  @Override
  public GatewayProcess gateway() {
    return gateway;
  }

  @BeforeEach
  void start(TestInfo testInfo) throws Exception {
    JobTestBed.requireDocker();
    nats = NatsServer.start(tmp.resolve("nats"));
    // Logs under target/, kept after the run: the temporary directory goes with the test.
    gateway =
        GatewayProcess.start(
            tmp.resolve("gateway"),
            Path.of(
                "target",
                "gateway-kill-logs",
                testInfo.getTestMethod().orElseThrow().getName()
                    + "-"
                    + System.currentTimeMillis()),
            Map.of("SPB_NATS_URL", nats.url(), "SPB_JOB_WALL_LIMIT", "90s"));
    assertEquals(201, gateway.api("POST", "/api/v1/repos", "{\"name\":\"demo\"}").statusCode());
    GitCli git = new GitCli(Files.createDirectories(tmp.resolve("home")));
    Path work = git.workTree(tmp, "work");
    git.ok(
        work,
        "push",
        "-q",
        gateway.baseUrl().replace("http://", "http://owner:" + gateway.ownerToken() + "@")
            + "/demo.git",
        "main");
  }

  @AfterEach
  void stop() throws Exception {
    if (runner != null) {
      runner.close().await();
    }
    if (gateway != null) {
      gateway.close();
    }
    if (nats != null) {
      nats.close();
    }
  }

  @Test
  void aJobRunningAcrossAGatewayCrashIsRecordedWholeAfterTheRestart() throws Exception {
    startRunner();
    String id =
        new JsonObject(
                gateway
                    .api(
                        "POST",
                        "/api/v1/repos/demo/agent-jobs",
                        new JsonObject()
                            .put("task", "count")
                            .put(
                                "exec",
                                "for i in $(seq 1 150); do echo line-$i; sleep 0.1; done; "
                                    + "echo counted > counted.txt")
                            .encode())
                    .body())
            .getString("id");
    awaitStatus(id, "started", Duration.ofSeconds(60));
    JobTestBed.awaitCondition(
        "the job prints",
        Duration.ofSeconds(30),
        () -> FaultChecks.lastLogChunk(nats.url(), id) >= 20);

    gateway.kill();
    Thread.sleep(2_000);
    gateway.restart();

    JsonObject done = awaitStatus(id, "finished", Duration.ofSeconds(90));
    assertEquals(
        "ok",
        done.getString("exit_reason"),
        done.encodePrettily() + "\n" + FaultChecks.log(nats.url(), id));
    assertTrue(done.getString("proposal_sha") != null, "the job pushed to the restarted gateway");
    FaultChecks.assertPushedJobAuditedOnce(auditEvents(id));
    FaultChecks.assertNumberedLinesOnce(FaultChecks.log(nats.url(), id), "line-", 150);
    AuditChain.Result chain = AuditLog.verify(gateway.auditLog());
    assertTrue(chain.ok(), chain.message());
    assertTrue(FaultChecks.jobContainers(id).isEmpty(), "no container is left");
  }

  @Test
  void aCrashMidBurstOfAuditAppendsLosesNoAcknowledgedJob() throws Exception {
    Set<String> acknowledged = ConcurrentHashMap.newKeySet();
    AtomicBoolean down = new AtomicBoolean();
    ExecutorService clients = Executors.newFixedThreadPool(4);
    String body = new JsonObject().put("task", "burst").put("exec", "true").encode();
    for (int i = 0; i < 4; i++) {
      clients.execute(
          () -> {
            while (!down.get()) {
              try {
                HttpResponse<String> r = gateway.api("POST", "/api/v1/repos/demo/agent-jobs", body);
                if (r.statusCode() == 201) {
                  acknowledged.add(new JsonObject(r.body()).getString("id"));
                }
              } catch (Exception e) {
                // The gateway is gone: this request was never acknowledged.
              }
            }
          });
    }
    JobTestBed.awaitCondition(
        "a burst of audit appends",
        Duration.ofSeconds(60),
        () -> Files.readAllLines(gateway.auditLog()).size() >= 40);
    gateway.kill();
    down.set(true);
    clients.shutdown();
    assertTrue(clients.awaitTermination(30, TimeUnit.SECONDS));
    AuditChain.Result atCrash = AuditLog.verify(gateway.auditLog());

    gateway.restart();

    AuditChain.Result chain = AuditLog.verify(gateway.auditLog());
    assertTrue(
        chain.ok(),
        "after the restart: " + chain.message() + " (at the crash: " + atCrash.message() + ")");
    List<JsonObject> entries = auditEntries(null);
    if (!atCrash.ok()) {
      assertTrue(
          entries.stream().anyMatch(e -> AuditLog.TORN_LINE_SET_ASIDE.equals(e.getString("event"))),
          "the torn line the crash left (" + atCrash.message() + ") was set aside and recorded");
    }
    Map<String, List<String>> eventsByJob =
        entries.stream()
            .filter(e -> e.getString("job") != null)
            .collect(
                Collectors.groupingBy(
                    e -> e.getString("job"),
                    Collectors.mapping(e -> e.getString("event"), Collectors.toList())));
    assertTrue(
        acknowledged.size() >= 5, "the burst was acknowledged for a while: " + acknowledged.size());
    for (String id : acknowledged) {
      assertEquals(
          List.of("job_created", "job_dispatched"), eventsByJob.get(id), "acknowledged job " + id);
    }

    // Every job the log knows ends with a recorded reason: the dispatched ones are cancelled out of
    // the queue,
    // and those the crash cut off before they were queued were ended by the restart.
    JsonArray jobs =
        new JsonArray(gateway.api("GET", "/api/v1/repos/demo/agent-jobs", null).body());
    assertEquals(eventsByJob.size(), jobs.size());
    List<String> cutOff = new ArrayList<>();
    for (Object o : jobs) {
      JsonObject job = (JsonObject) o;
      String id = job.getString("id");
      if ("dispatched".equals(job.getString("status"))) {
        HttpResponse<String> cancelled =
            gateway.api("POST", "/api/v1/repos/demo/agent-jobs/" + id + "/cancel", null);
        assertEquals(202, cancelled.statusCode(), cancelled.body());
        assertEquals(
            "cancelled",
            new JsonObject(cancelled.body()).getString("exit_reason"),
            cancelled.body());
      } else {
        assertEquals("finished", job.getString("status"), job.encodePrettily());
        assertEquals("runner_error", job.getString("exit_reason"));
        assertEquals("the gateway stopped before the job was queued", job.getString("detail"));
        assertFalse(acknowledged.contains(id), "an acknowledged job was queued");
        cutOff.add(id);
      }
    }
    for (Map.Entry<String, List<String>> job : auditEvents().entrySet()) {
      List<String> expected =
          cutOff.contains(job.getKey())
              ? List.of("job_created", "job_finished")
              : List.of("job_created", "job_dispatched", "job_finished");
      assertEquals(expected, job.getValue(), "job " + job.getKey() + ", each line once");
    }
    assertTrue(AuditLog.verify(gateway.auditLog()).ok());
  }

  private void startRunner() throws IOException {
    Map<String, String> env = new HashMap<>();
    env.put("SPB_NATS_URL", nats.url());
    env.put("SPB_RUNNER_ID", FaultChecks.uniqueRunnerId("steady"));
    env.put("SPB_AGENT_IMAGE", JobTestBed.IMAGE);
    env.put("SPB_RUNNER_WORK_DIR", tmp.resolve("runner-work").toString());
    env.put("SPB_LIMIT_MEMORY", "256m");
    env.put("SPB_LIMIT_DISK", "32m");
    env.put("SPB_LIMIT_CPUS", "1");
    env.put("SPB_GATEWAY_KEYS", gateway.jobBusKeys().toString());
    runner = Vertx.vertx();
    RunnerConfig config = RunnerConfig.from(RunnerConfig.fromEnvironment(env));
    runner.deployVerticle(new RunnerVerticle(config, Clock.systemUTC())).await();
    gateway.registerRunner("steady", EcKeys.publicFileBeside(config.runnerKey()));
  }

  private JsonObject awaitStatus(String id, String status, Duration timeout) throws Exception {
    long deadline = System.nanoTime() + timeout.toNanos();
    JsonObject job;
    do {
      job = new JsonObject(gateway.api("GET", "/api/v1/repos/demo/agent-jobs/" + id, null).body());
      if (status.equals(job.getString("status"))) {
        return job;
      }
      Thread.sleep(250);
    } while (System.nanoTime() < deadline);
    throw new AssertionError(
        "job " + id + " did not become " + status + ": " + job.encodePrettily());
  }

  private List<JsonObject> auditEntries(String job) throws Exception {
    HttpResponse<String> r =
        gateway.api("GET", "/api/v1/agent-jobs" + (job == null ? "" : "?job=" + job), null);
    assertEquals(200, r.statusCode(), r.body());
    return new JsonArray(r.body()).stream().map(e -> (JsonObject) e).toList();
  }

  private List<String> auditEvents(String job) throws Exception {
    return auditEntries(job).stream().map(e -> e.getString("event")).toList();
  }

  /** Each job's audit events, in order. */
  private Map<String, List<String>> auditEvents() throws Exception {
    return auditEntries(null).stream()
        .filter(e -> e.getString("job") != null)
        .collect(
            Collectors.groupingBy(
                e -> e.getString("job"),
                Collectors.mapping(e -> e.getString("event"), Collectors.toList())));
  }
}
