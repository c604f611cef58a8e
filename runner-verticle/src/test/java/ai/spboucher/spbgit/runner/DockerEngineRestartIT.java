package ai.spboucher.spbgit.runner;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import ai.spboucher.spbgit.gateway.jobs.AuditLog;
import io.vertx.core.json.JsonObject;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Docker engine restarted, and crashed, under a running job. The machine's shared engine is never touched: the
 * runner here uses a private dockerd of the test's own, which the tests stop the way an operator does (SIGTERM,
 * which stops its containers first) or kill (SIGKILL, which stops nothing), then start again. The job must end
 * with a reason that names the engine, with its log intact up to the cut; the runner must neither hang nor take
 * jobs while the engine is away, must run the next job once it is back, and no container may be left behind.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class DockerEngineRestartIT {

  /** Short, for the engine's unix socket path. */
  @TempDir
  static Path engineDir;
  private static PrivateDockerEngine engine;

  @TempDir
  Path tmp;
  private JobTestBed bed;

  @BeforeAll
  static void startEngine() throws Exception {
    JobTestBed.requireDocker();
    try {
      engine = PrivateDockerEngine.start(engineDir.resolve("engine"));
    } catch (Exception e) {
      if ("true".equals(System.getenv("CI"))) {
        fail("a second, private dockerd is required in CI: " + e.getMessage());
      }
      Assumptions.abort("cannot start a second, private dockerd on this machine: " + e.getMessage());
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
  void start() throws Exception {
    bed = JobTestBed.start(tmp, "90s");
    bed.createRepo("demo", Map.of("README.md", "hello\n"));
    bed.startRunner(FaultChecks.uniqueRunnerId("private-engine"), Map.of("DOCKER_HOST", engine.host()));
  }

  @AfterEach
  void stop() throws Exception {
    bed.close();
    engine.startAgain();
  }

  @Test
  void aJobWhoseEngineRestartsEndsRunnerErrorAndTheNextWaitsForTheEngine() throws Exception {
    String id = bed.submit("demo", "for i in $(seq 1 600); do echo tick-$i; sleep 0.1; done", null)
        .getString("id");
    bed.await("demo", id, "started", Duration.ofSeconds(60));
    JobTestBed.awaitCondition("the job prints", Duration.ofSeconds(30),
        () -> FaultChecks.lastLogChunk(bed.nats.url(), id) >= 16);
    assertEquals(1, engine.jobContainers(id).size());

    engine.stop();

    JsonObject done = bed.await("demo", id, "finished", Duration.ofSeconds(60));
    assertEquals("runner_error", done.getString("exit_reason"), done.encodePrettily());
    // A stopping engine sends its containers SIGTERM, and the runner sees that signal come from the engine; had
    // the engine died without a word, the runner would have lost its connection instead.
    String detail = done.getString("detail");
    assertTrue(detail.startsWith("the Docker engine stopped the container (signal 15)")
        || detail.startsWith("lost the Docker engine while the job was running"), detail);
    String log = bed.log(id);
    FaultChecks.assertNumberedLinesOnce(log, "tick-", 3);
    assertTrue(log.contains("[spb-runner] runner error: " + detail), log);
    assertEquals(List.of("job_created", "job_dispatched", "job_started", "job_finished"), bed.auditEvents(id));

    // While the engine is away the runner takes no job: it could only fail it.
    String next = bed.submit("demo", "echo after > after.txt", null).getString("id");
    Thread.sleep(5_000);
    assertEquals("dispatched", bed.job("demo", next).getString("status"));
    assertEquals(1, bed.queuedRequests(), "the job waits in the queue");

    engine.startAgain();
    JobTestBed.awaitCondition("the runner removes the stopped container once the engine is back",
        Duration.ofSeconds(30), () -> engine.jobContainers(id).isEmpty());
    JsonObject after = bed.awaitFinished("demo", next);
    assertEquals("ok", after.getString("exit_reason"), after.encodePrettily() + "\n" + bed.log(next));
    assertTrue(after.getString("proposal_sha") != null, after.encodePrettily());
    JobTestBed.awaitCondition("no container is left on the private engine", Duration.ofSeconds(30),
        () -> engine.allContainers().isEmpty());
    AuditLog.VerifyResult chain = AuditLog.verify(bed.auditLog());
    assertTrue(chain.ok(), chain.message());
  }

  @Test
  void aJobWhoseEngineCrashesEndsRunnerErrorAndItsContainerGoesOnceTheEngineIsBack() throws Exception {
    String id = bed.submit("demo", "for i in $(seq 1 600); do echo tick-$i; sleep 0.1; done", null)
        .getString("id");
    bed.await("demo", id, "started", Duration.ofSeconds(60));
    JobTestBed.awaitCondition("the job prints", Duration.ofSeconds(30),
        () -> FaultChecks.lastLogChunk(bed.nats.url(), id) >= 16);

    engine.crash();

    JsonObject done = bed.await("demo", id, "finished", Duration.ofSeconds(60));
    assertEquals("runner_error", done.getString("exit_reason"), done.encodePrettily());
    String detail = done.getString("detail");
    assertTrue(detail.startsWith("lost the Docker engine while the job was running"), detail);
    String log = bed.log(id);
    FaultChecks.assertNumberedLinesOnce(log, "tick-", 3);
    assertTrue(log.contains("[spb-runner] runner error: " + detail), log);
    assertEquals(List.of("job_created", "job_dispatched", "job_started", "job_finished"), bed.auditEvents(id));

    // The crashed engine left the container behind; the runner removes it once the engine answers again.
    engine.startAgain();
    JobTestBed.awaitCondition("the runner removes the container the crash left", Duration.ofSeconds(60),
        () -> engine.allContainers().isEmpty());
    AuditLog.VerifyResult chain = AuditLog.verify(bed.auditLog());
    assertTrue(chain.ok(), chain.message());
  }
}
