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
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Docker engine restarted under a running job. The machine's shared engine is never touched: the runner here
 * uses a private dockerd of the test's own, which the test restarts the way an operator would (SIGTERM, which
 * stops its containers, then a new start). The job must end with a reason that names the engine, the runner must
 * neither hang nor take jobs while the engine is away, and no container may be left behind once it is back.
 */
@Timeout(value = 240, unit = TimeUnit.SECONDS)
class DockerEngineRestartIT {

  @TempDir
  Path tmp;
  private PrivateDockerEngine engine;
  private JobTestBed bed;

  @AfterEach
  void stop() throws Exception {
    if (bed != null) {
      bed.close();
    }
    if (engine != null) {
      engine.close();
    }
  }

  @Test
  void aJobWhoseEngineRestartsEndsRunnerErrorAndTheNextWaitsForTheEngine() throws Exception {
    JobTestBed.requireDocker();
    engine = startPrivateEngine(tmp.resolve("engine"));
    engine.loadImage(JobTestBed.IMAGE);
    bed = JobTestBed.start(tmp, "90s");
    bed.createRepo("demo", Map.of("README.md", "hello\n"));
    bed.startRunner("private-engine", Map.of("DOCKER_HOST", engine.host()));

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

  /** Starts the private engine, or skips (fails under CI) when this machine cannot run a second dockerd. */
  private static PrivateDockerEngine startPrivateEngine(Path dir) throws Exception {
    try {
      return PrivateDockerEngine.start(dir);
    } catch (Exception e) {
      if ("true".equals(System.getenv("CI"))) {
        fail("a second, private dockerd is required in CI: " + e.getMessage());
      }
      Assumptions.abort("cannot start a second, private dockerd on this machine: " + e.getMessage());
      throw e;
    }
  }
}
