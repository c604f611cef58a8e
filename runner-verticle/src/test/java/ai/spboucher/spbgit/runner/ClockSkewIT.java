package ai.spboucher.spbgit.runner;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.spboucher.spbgit.gateway.audit.AuditLog;
import ai.spboucher.spbgit.proto.AuditChain;
import ai.spboucher.spbgit.proto.JobStatus;
import ai.spboucher.spbgit.proto.Mode;
import ai.spboucher.spbgit.proto.StatusChange;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A runner whose clock is two minutes ahead of the gateway's, and one two minutes behind. Job
 * tokens are checked on the gateway's clock alone, and the wall clock is the runner's own timer, so
 * jobs must run, push and time out as usual. The deadline is the gateway's instant: the runner must
 * not take a job that waited in the queue close to it for expired (clock ahead), nor run one whose
 * deadline passed while it waited (clock behind).
 */
@Timeout(value = 150, unit = TimeUnit.SECONDS)
class ClockSkewIT {

  private static final Duration SKEW = Duration.ofMinutes(2);

  @TempDir Path tmp;
  private JobTestBed bed;
  private Vertx runner;

  @BeforeEach
  void start() throws Exception {
    bed = JobTestBed.start(tmp, "20s");
    bed.createRepo("demo", Map.of("README.md", "hello\n"));
  }

  @AfterEach
  void stop() throws Exception {
    if (runner != null) {
      runner.close().await();
    }
    bed.close();
  }

  @Test
  void aRunnerTwoMinutesAheadRunsAndPushesJobsCloseToTheirDeadline() throws Exception {
    String runnerId = startRunner("ahead", Clock.offset(Clock.systemUTC(), SKEW));

    JsonObject job = bed.submit("demo", "echo ahead > skew.txt", null);
    String id = job.getString("id");
    JsonObject done = bed.awaitFinished("demo", id);
    assertEquals("ok", done.getString("exit_reason"), done.encodePrettily() + "\n" + bed.log(id));
    assertProposalPushed(id, done);
    assertTrue(
        bed.log(id).startsWith("[spb-runner] job " + id + " taken by runner " + runnerId + "\n"),
        bed.log(id));

    // 60 s left of a 60 s budget: to this runner's clock the deadline passed a minute ago.
    String near = "skew-near-" + System.nanoTime() % 100_000;
    long now = System.currentTimeMillis();
    bed.publish(
        bed.request("demo", near, Mode.MODE_EXEC, "near its deadline", 30)
            .setExecCommand("echo near > n.txt")
            .setCreatedEpochMs(now)
            .setDeadlineEpochMs(now + 60_000)
            .build());
    StatusChange finished = bed.awaitFinishedEvent(near, Duration.ofSeconds(60));
    assertEquals("ok", finished.getExitReason(), finished.getDetail() + "\n" + bed.log(near));
    assertTrue(bed.log(near).contains("wall clock limit 30 s"), bed.log(near));
    assertTrue(
        bed.git.refs(bed.gateway.repoDir("demo")).contains("refs/agents/" + near + "/proposal"));
    assertNothingLeft(id, near);
  }

  @Test
  void aRunnerTwoMinutesBehindRunsJobsButNoneWhoseDeadlinePassedInTheQueue() throws Exception {
    // Queued with a 3 s budget while no runner is up, and taken only after it is spent: to this
    // runner's clock,
    // almost two minutes are left.
    String stale = "skew-stale-" + System.nanoTime() % 100_000;
    long now = System.currentTimeMillis();
    bed.publish(
        bed.request("demo", stale, Mode.MODE_EXEC, "stale", 30)
            .setExecCommand("echo stale > s.txt")
            .setCreatedEpochMs(now)
            .setDeadlineEpochMs(now + 3_000)
            .build());
    Thread.sleep(5_000);
    startRunner("behind", Clock.offset(Clock.systemUTC(), SKEW.negated()));

    StatusChange refused = bed.awaitFinishedEvent(stale, Duration.ofSeconds(30));
    assertEquals("timeout", refused.getExitReason());
    assertEquals("deadline passed before start", refused.getDetail());
    assertEquals(
        List.of(JobStatus.FINISHED),
        bed.statusEvents(stale).stream().map(e -> e.getStatus().getStatus()).toList(),
        "no container was started");

    String id = bed.submit("demo", "echo behind > skew.txt", null).getString("id");
    JsonObject done = bed.awaitFinished("demo", id);
    assertEquals("ok", done.getString("exit_reason"), done.encodePrettily() + "\n" + bed.log(id));
    assertProposalPushed(id, done);

    // The wall clock is the runner's own timer: 20 s, whatever its clock says.
    String slow = bed.submit("demo", "sleep 90", null).getString("id");
    JsonObject timedOut = bed.awaitFinished("demo", slow);
    assertEquals("timeout", timedOut.getString("exit_reason"), timedOut.encodePrettily());
    Duration ran =
        Duration.between(
            Instant.parse(timedOut.getString("started_at")),
            Instant.parse(timedOut.getString("finished_at")));
    assertTrue(
        ran.compareTo(Duration.ofSeconds(18)) > 0 && ran.compareTo(Duration.ofSeconds(60)) < 0,
        "stopped after its 20 s wall clock, not " + ran);
    assertNothingLeft(id, slow, stale);
  }

  /** Starts a runner on {@code clock}; returns its id. */
  private String startRunner(String name, Clock clock) {
    String id = FaultChecks.uniqueRunnerId(name);
    Map<String, String> env = new HashMap<>(bed.runnerEnv(id));
    runner = Vertx.vertx();
    runner
        .deployVerticle(
            new RunnerVerticle(RunnerConfig.from(RunnerConfig.fromEnvironment(env)), clock))
        .await();
    return id;
  }

  /** The gateway accepted the job token's push (checked on its clock) and audited it. */
  private void assertProposalPushed(String id, JsonObject done) throws Exception {
    assertTrue(done.getString("proposal_sha") != null, done.encodePrettily());
    FaultChecks.assertPushedJobAuditedOnce(bed.auditEvents(id));
  }

  private void assertNothingLeft(String... ids) throws Exception {
    for (String id : ids) {
      assertTrue(bed.jobContainers(id).isEmpty(), "no container of " + id + " is left");
    }
    AuditChain.Result chain = AuditLog.verify(bed.auditLog());
    assertTrue(chain.ok(), chain.message());
  }
}
