package ai.spboucher.spbgit.runner;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.spboucher.spbgit.gateway.audit.AuditLog;
import ai.spboucher.spbgit.proto.AuditChain;
import ai.spboucher.spbgit.testsupport.Prerequisites;
import io.vertx.core.json.JsonObject;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Docker engine restarted, and crashed, under a running job. The machine's shared engine is
 * never touched: the runner here uses a private dockerd of the test's own, which the tests stop the
 * way an operator does (SIGTERM, which stops its containers first) or kill (SIGKILL, which stops
 * nothing), then start again. The job must end with a reason that names the engine, with its log
 * intact up to the cut; the runner must neither hang nor take jobs while the engine is away, must
 * run the next job once it is back, and no container may be left behind.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class DockerEngineRestartIT {

  /** Short, for the engine's unix socket path. */
  @TempDir static Path engineDir;

  private static PrivateDockerEngine engine;

  @TempDir Path tmp;
  private JobTestBed bed;

  @BeforeAll
  static void startEngine() throws Exception {
    JobTestBed.requireDocker();
    try {
      engine = PrivateDockerEngine.start(engineDir.resolve("engine"));
    } catch (Exception e) {
      Prerequisites.unmet("a second, private dockerd on this machine: " + e.getMessage());
    }
    engine.loadImage(JobTestBed.IMAGE);
  }

  @AfterAll
  static void stopEngine() throws Exception {
    if (engine != null) {
      engine.close();
    }
  }

  @BeforeEach
  void start(org.junit.jupiter.api.TestInfo test) throws Exception {
    bed = JobTestBed.start(tmp, "90s");
    bed.createRepo("demo", Map.of("README.md", "hello\n"));
    if (!test.getTestMethod().orElseThrow().getName().startsWith("aFrozenEngine")) {
      bed.startRunner(
          FaultChecks.uniqueRunnerId("private-engine"), Map.of("DOCKER_HOST", engine.host()));
    }
  }

  @AfterEach
  void stop() throws Exception {
    bed.close();
    engine.startAgain();
  }

  @Test
  void aJobWhoseEngineRestartsEndsRunnerErrorAndTheNextWaitsForTheEngine() throws Exception {
    String id =
        bed.submit("demo", "for i in $(seq 1 600); do echo tick-$i; sleep 0.1; done", null)
            .getString("id");
    bed.await("demo", id, "started", Duration.ofSeconds(60));
    JobTestBed.awaitCondition(
        "the job prints",
        Duration.ofSeconds(30),
        () -> FaultChecks.lastLogChunk(bed.nats.url(), id) >= 16);
    assertEquals(1, engine.jobContainers(id).size());

    engine.stop();

    JsonObject done = bed.await("demo", id, "finished", Duration.ofSeconds(60));
    assertEquals("runner_error", done.getString("exit_reason"), done.encodePrettily());
    // A stopping engine sends its containers SIGTERM, and the runner sees that signal come from the
    // engine; had
    // the engine died without a word, the runner would have lost its connection instead.
    String detail = done.getString("detail");
    assertTrue(
        detail.startsWith("the Docker engine stopped the container (signal 15)")
            || detail.startsWith("lost the Docker engine while the job was running"),
        detail);
    String log = bed.log(id);
    FaultChecks.assertNumberedLinesOnce(log, "tick-", 3);
    assertTrue(log.contains("[spb-runner] runner error: " + detail), log);
    assertEquals(
        List.of("job_created", "job_dispatched", "job_started", "job_finished"),
        bed.auditEvents(id));

    // While the engine is away the runner takes no job: it could only fail it.
    String next = bed.submit("demo", "echo after > after.txt", null).getString("id");
    Thread.sleep(5_000);
    assertEquals("dispatched", bed.job("demo", next).getString("status"));
    assertEquals(1, bed.queuedRequests(), "the job waits in the queue");

    engine.startAgain();
    JobTestBed.awaitCondition(
        "the runner removes the stopped container once the engine is back",
        Duration.ofSeconds(30),
        () -> engine.jobContainers(id).isEmpty());
    JsonObject after = bed.awaitFinished("demo", next);
    assertEquals(
        "ok", after.getString("exit_reason"), after.encodePrettily() + "\n" + bed.log(next));
    assertTrue(after.getString("proposal_sha") != null, after.encodePrettily());
    JobTestBed.awaitCondition(
        "no container is left on the private engine",
        Duration.ofSeconds(30),
        () -> engine.allContainers().isEmpty());
    AuditChain.Result chain = AuditLog.verify(bed.auditLog());
    assertTrue(chain.ok(), chain.message());
  }

  @Test
  void aFrozenEngineEndsTheJobOnceItsCallsTimeOutAndTheRunnerWaitsForItToAnswer() throws Exception {
    // A runner of its own: a short wall clock and call timeout keep the test short; a health
    // endpoint to watch.
    int healthPort = ai.spboucher.spbgit.testsupport.NatsServer.freePort();
    bed.startRunner(
        FaultChecks.uniqueRunnerId("frozen-engine"),
        Map.of(
            "DOCKER_HOST",
            engine.host(),
            "SPB_DOCKER_CALL_TIMEOUT",
            "8s",
            "SPB_LIMIT_WALL",
            "25s",
            "SPB_RUNNER_HEALTH",
            "127.0.0.1:" + healthPort));
    String id =
        bed.submit("demo", "for i in $(seq 1 600); do echo tick-$i; sleep 0.1; done", null)
            .getString("id");
    bed.await("demo", id, "started", Duration.ofSeconds(60));
    JobTestBed.awaitCondition(
        "the job prints",
        Duration.ofSeconds(30),
        () -> FaultChecks.lastLogChunk(bed.nats.url(), id) >= 16);

    engine.freeze();
    long frozenAt = System.nanoTime();

    // The job's wall clock runs out while the engine answers nothing: killing its container times
    // out, and the
    // job ends with a reason that names the engine instead of holding its thread for ever.
    JsonObject done = bed.await("demo", id, "finished", Duration.ofSeconds(90));
    assertEquals("runner_error", done.getString("exit_reason"), done.encodePrettily());
    assertTrue(
        done.getString("detail").startsWith("lost the Docker engine while the job was running"),
        done.getString("detail"));
    assertTrue(
        bed.log(id).contains("[spb-runner] runner error: lost the Docker engine"), bed.log(id));
    // And the runner says it cannot take jobs, and takes none.
    JobTestBed.awaitCondition(
        "the runner's health says the engine does not answer",
        Duration.ofSeconds(30),
        () -> health(healthPort).contains("docker engine not answering"));
    String next = bed.submit("demo", "echo after > after.txt", null).getString("id");
    Thread.sleep(3_000);
    assertEquals(
        "dispatched", bed.job("demo", next).getString("status"), "no job is taken while frozen");
    assertTrue(
        System.nanoTime() - frozenAt < TimeUnit.SECONDS.toNanos(100),
        "all of that while still frozen");

    engine.thaw();
    JobTestBed.awaitCondition(
        "the runner removes the job's container once the engine answers",
        Duration.ofSeconds(60),
        () -> engine.jobContainers(id).isEmpty());
    JsonObject after = bed.awaitFinished("demo", next);
    assertEquals(
        "ok", after.getString("exit_reason"), after.encodePrettily() + "\n" + bed.log(next));
    assertTrue(health(healthPort).contains("\"status\":\"ok\""));
    assertEquals(
        List.of("job_created", "job_dispatched", "job_started", "job_finished"),
        bed.auditEvents(id));
  }

  private static String health(int port) throws Exception {
    java.net.http.HttpResponse<String> response =
        java.net.http.HttpClient.newHttpClient()
            .send(
                java.net.http.HttpRequest.newBuilder(
                        java.net.URI.create("http://127.0.0.1:" + port + "/healthz"))
                    .timeout(Duration.ofSeconds(5))
                    .build(),
                java.net.http.HttpResponse.BodyHandlers.ofString());
    return response.body();
  }

  @Test
  void aJobWhoseEngineCrashesEndsRunnerErrorAndItsContainerGoesOnceTheEngineIsBack()
      throws Exception {
    String id =
        bed.submit("demo", "for i in $(seq 1 600); do echo tick-$i; sleep 0.1; done", null)
            .getString("id");
    bed.await("demo", id, "started", Duration.ofSeconds(60));
    JobTestBed.awaitCondition(
        "the job prints",
        Duration.ofSeconds(30),
        () -> FaultChecks.lastLogChunk(bed.nats.url(), id) >= 16);

    engine.crash();

    JsonObject done = bed.await("demo", id, "finished", Duration.ofSeconds(60));
    assertEquals("runner_error", done.getString("exit_reason"), done.encodePrettily());
    String detail = done.getString("detail");
    assertTrue(detail.startsWith("lost the Docker engine while the job was running"), detail);
    String log = bed.log(id);
    FaultChecks.assertNumberedLinesOnce(log, "tick-", 3);
    assertTrue(log.contains("[spb-runner] runner error: " + detail), log);
    assertEquals(
        List.of("job_created", "job_dispatched", "job_started", "job_finished"),
        bed.auditEvents(id));

    // The crashed engine left the container behind; the runner removes it once the engine answers
    // again.
    engine.startAgain();
    JobTestBed.awaitCondition(
        "the runner removes the container the crash left",
        Duration.ofSeconds(60),
        () -> engine.allContainers().isEmpty());
    AuditChain.Result chain = AuditLog.verify(bed.auditLog());
    assertTrue(chain.ok(), chain.message());
  }
}
