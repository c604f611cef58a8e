package ai.spboucher.spbgit.runner;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import ai.spboucher.spbgit.proto.Subjects;
import io.nats.client.Connection;
import io.nats.client.api.StreamInfo;
import io.vertx.core.json.JsonObject;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The product on a three-node NATS cluster, as docs/operations.md describes it: the gateway and two
 * runners get all three URLs in {@code SPB_NATS_URL}, and the gateway creates the streams with
 * {@code SPB_NATS_REPLICAS=3}. Killing one node mid-job (the one the job's runner is connected to,
 * made the events stream's leader first) must not show: the job completes, fully logged, recorded
 * once.
 */
@Timeout(value = 150, unit = TimeUnit.SECONDS)
class NatsClusterIT {

  @TempDir Path tmp;
  ClusterNats cluster;
  JobTestBed bed;

  @BeforeEach
  void start() throws Exception {
    cluster = ClusterNats.start(tmp.resolve("nats"));
    bed = JobTestBed.onNats(tmp, cluster.urls(), "60s", new JsonObject().put("natsReplicas", "3"));
    // The gateway creates the streams once connected; the runners must find them replicated, not
    // make their own.
    JobTestBed.awaitCondition(
        "the gateway created both streams with three replicas",
        Duration.ofSeconds(60),
        () -> replicas(Subjects.JOBS_STREAM) == 3 && replicas(Subjects.EVENTS_STREAM) == 3);
    bed.createRepo("demo", Map.of("README.md", "hello\n"));
    bed.startRunner("east", Map.of());
    bed.startRunner("west", Map.of());
  }

  @AfterEach
  void stop() throws Exception {
    try {
      if (bed != null) {
        bed.close();
      }
    } finally {
      cluster.close();
    }
  }

  @Test
  void nodeKilledMidJobLosesNothing() throws Exception {
    String exec = FaultChecks.numberedLines("step-", 48, 1, "0.25") + "; echo done > done.txt";
    String id = bed.submit("demo", exec, "test -f done.txt").getString("id");
    String runner = bed.await("demo", id, "started", Duration.ofSeconds(60)).getString("runner_id");
    String victim = cluster.nodeOf("spb-runner-" + runner);
    assertNotNull(victim, "runner " + runner + " is connected to a node");
    // Make the killed node also the one every event of the job goes through first.
    for (int i = 0; i < 6 && !victim.equals(cluster.streamLeader(Subjects.EVENTS_STREAM)); i++) {
      cluster.stepDown(Subjects.EVENTS_STREAM);
    }

    try (LiveLines live = LiveLines.watch(bed, id, "step-")) {
      live.await(8, Duration.ofSeconds(60));
    }
    String scenario =
        "killed "
            + victim
            + ", the node of runner "
            + runner
            + "; the events stream's leader was "
            + cluster.streamLeader(Subjects.EVENTS_STREAM)
            + "; node logs in "
            + cluster.logs();
    cluster.kill(victim);

    JsonObject done = bed.await("demo", id, "finished", Duration.ofSeconds(90));
    assertEquals("ok", done.getString("exit_reason"), scenario + "\n" + done.encodePrettily());
    assertEquals(runner, done.getString("runner_id"));
    assertEquals(
        "passed", done.getString("test_result"), "the proposal was pushed and its test passed");
    FaultChecks.assertLogComplete(bed, "demo", id, "step-", 48);
    FaultChecks.assertAudited(
        bed,
        id,
        List.of("job_created", "job_dispatched", "job_started", "refs_written", "job_finished"));
    FaultChecks.assertNoContainerLeft(bed, id);
    assertNotEquals(
        victim, cluster.streamLeader(Subjects.EVENTS_STREAM), "a surviving node leads the stream");
  }

  private int replicas(String stream) throws Exception {
    try (Connection connection = cluster.connect()) {
      StreamInfo info = connection.jetStreamManagement().getStreamInfo(stream);
      return info.getConfiguration().getReplicas();
    } catch (io.nats.client.JetStreamApiException e) {
      return 0; // Not created yet.
    } catch (java.io.IOException e) {
      return 0; // A fresh cluster answers JetStream requests only once it has elected its meta
      // leader.
    }
  }
}
