package ai.spboucher.spbgit.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.spboucher.spbgit.proto.EgressAttempt;
import ai.spboucher.spbgit.proto.JobEvent;
import ai.spboucher.spbgit.proto.LogChunk;
import ai.spboucher.spbgit.proto.LogStream;
import ai.spboucher.spbgit.proto.Subjects;
import ai.spboucher.spbgit.testsupport.LogFollower;
import ai.spboucher.spbgit.testsupport.NatsServer;
import ai.spboucher.spbgit.testsupport.Stack;
import com.google.protobuf.ByteString;
import io.nats.client.Connection;
import io.nats.client.PublishOptions;
import io.nats.client.api.PublishAck;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The log-line and egress-refusal metrics count what runners store, once each: events published
 * onto a real nats-server the way a runner publishes them (JetStream, {@code Nats-Msg-Id} {@code
 * <job>.<kind>.<n>}) show up in {@code /metrics}, and neither a runner's duplicate publish, nor
 * viewers replaying the job (the text log, the log websocket, the egress list), nor a NATS restart
 * adds to them.
 */
class JobEventMetricsIT {

  private static final String STDOUT_LINES = "spb_job_log_lines_total{stream=\"stdout\"}";
  private static final String STDERR_LINES = "spb_job_log_lines_total{stream=\"stderr\"}";
  private static final String RUNNER_LINES = "spb_job_log_lines_total{stream=\"runner\"}";
  private static final String PROXY_REFUSALS = "spb_egress_refusals_total{via=\"proxy\"}";
  private static final String MODEL_REFUSALS = "spb_egress_refusals_total{via=\"model_endpoint\"}";

  @TempDir Path tmp;

  @Test
  void countsLogLinesAndEgressRefusalsOnceWhateverViewersReplay() throws Exception {
    try (Stack stack = Stack.builder(tmp).nats().gateway(new JsonObject()).start()) {
      TestGateway gateway = stack.gateway(TestGateway.class);
      Connection runner = stack.natsConnection();
      NatsServer nats = stack.nats();
      String id = startJob(stack);
      Map<String, Double> zero =
          Map.of(
              STDOUT_LINES,
              0.0,
              STDERR_LINES,
              0.0,
              RUNNER_LINES,
              0.0,
              PROXY_REFUSALS,
              0.0,
              MODEL_REFUSALS,
              0.0);
      assertEquals(zero, metrics(gateway, zero));

      RunnerEvents events = new RunnerEvents(runner, id);
      events.log(LogStream.RUNNER, "[spb-runner] job " + id + " starting\n");
      events.log(LogStream.STDOUT, "one\ntwo\nthr");
      events.log(LogStream.STDOUT, "ee\n");
      events.log(LogStream.STDERR, "warning: x\n");
      events.log(LogStream.STDOUT, "no newline yet");
      events.egress(true, "proxy", "");
      events.egress(false, "proxy", "not on the allow-list");
      events.egress(false, "model_endpoint", "budget_exceeded: the job's token budget is spent");
      events.repeatLast(); // A runner retrying a publish whose acknowledgement it missed.

      Map<String, Double> expected =
          Map.of(
              STDOUT_LINES,
              3.0,
              STDERR_LINES,
              1.0,
              RUNNER_LINES,
              1.0,
              PROXY_REFUSALS,
              1.0,
              MODEL_REFUSALS,
              1.0);
      assertEquals(expected, awaitMetrics(gateway, expected));

      String job = "/api/v1/repos/demo/agent-jobs/" + id;
      assertEquals(
          "[spb-runner] job " + id + " starting\none\ntwo\nthree\nwarning: x\nno newline yet",
          gateway.api("GET", job + "/log", gateway.ownerToken, null).body());
      JsonArray attempts =
          new JsonArray(gateway.api("GET", job + "/egress", gateway.ownerToken, null).body());
      assertEquals(3, attempts.size(), attempts.encode());
      assertEquals(5, followLog(gateway, id).size());

      // The ordered consumers reconnect by themselves and resume after what they already delivered.
      nats.kill();
      nats.restart();
      gateway.awaitReady();
      events.log(
          LogStream.STDOUT,
          "\n"); // Ends "no newline yet": after the replays, so it is counted last.
      Map<String, Double> afterReplays =
          Map.of(
              STDOUT_LINES,
              4.0,
              STDERR_LINES,
              1.0,
              RUNNER_LINES,
              1.0,
              PROXY_REFUSALS,
              1.0,
              MODEL_REFUSALS,
              1.0);
      assertEquals(afterReplays, awaitMetrics(gateway, afterReplays));
      Thread.sleep(1000);
      assertEquals(afterReplays, metrics(gateway, afterReplays), "a replay was counted");
    }
  }

  /**
   * Publishes a job's events as its runner does: synchronously, numbered per subject, deduplicated
   * by id.
   */
  private static final class RunnerEvents {

    private final Connection connection;
    private final String jobId;
    private long logSequence;
    private long egressSequence;
    private Runnable last;

    RunnerEvents(Connection connection, String jobId) {
      this.connection = connection;
      this.jobId = jobId;
    }

    void log(LogStream stream, String data) throws Exception {
      JobEvent event =
          base(++logSequence)
              .setLog(
                  LogChunk.newBuilder()
                      .setStream(stream)
                      .setData(ByteString.copyFrom(data, StandardCharsets.UTF_8)))
              .build();
      publish(Subjects.logEvents(jobId), "log", event);
    }

    void egress(boolean allowed, String via, String failure) throws Exception {
      JobEvent event =
          base(++egressSequence)
              .setEgress(
                  EgressAttempt.newBuilder()
                      .setMethod("CONNECT")
                      .setHost("example.org")
                      .setPort(443)
                      .setAllowed(allowed)
                      .setFailure(failure)
                      .setVia(via)
                      .setStartedEpochMs(System.currentTimeMillis()))
              .build();
      publish(Subjects.egressEvents(jobId), "egress", event);
    }

    void repeatLast() {
      last.run();
    }

    private JobEvent.Builder base(long sequence) {
      return JobEvent.newBuilder()
          .setJobId(jobId)
          .setSequence(sequence)
          .setTimestampEpochMs(System.currentTimeMillis());
    }

    private void publish(String subject, String kind, JobEvent event) throws Exception {
      PublishOptions options =
          PublishOptions.builder()
              .messageId(jobId + "." + kind + "." + event.getSequence())
              .build();
      PublishAck ack = connection.jetStream().publish(subject, event.toByteArray(), options);
      assertFalse(ack.isDuplicate());
      last =
          () -> {
            try {
              assertTrue(
                  connection
                      .jetStream()
                      .publish(subject, event.toByteArray(), options)
                      .isDuplicate());
            } catch (Exception e) {
              throw new AssertionError(e);
            }
          };
    }
  }

  /** A real job, queued for a runner that never comes: the events below stand in for it. */
  private static String startJob(Stack stack) throws Exception {
    stack.createRepo("demo", "work");
    var created =
        stack
            .owner()
            .post("/api/v1/repos/demo/agent-jobs", "{\"task\":\"count\",\"exec\":\"true\"}");
    assertEquals(201, created.statusCode(), created.body());
    return new JsonObject(created.body()).getString("id");
  }

  /**
   * Every log frame of the websocket, from the start: a replay, then the live tail (nothing more
   * comes).
   */
  private static List<JsonObject> followLog(TestGateway gateway, String id) throws Exception {
    try (LogFollower log = LogFollower.open(gateway.baseUrl, gateway.ownerToken, "demo", id, 0)) {
      return log.logsUntilQuiet(Duration.ofSeconds(3));
    }
  }

  private static Map<String, Double> awaitMetrics(TestGateway gateway, Map<String, Double> expected)
      throws Exception {
    long deadline = System.currentTimeMillis() + 30_000;
    Map<String, Double> seen = metrics(gateway, expected);
    while (!seen.equals(expected) && System.currentTimeMillis() < deadline) {
      Thread.sleep(100);
      seen = metrics(gateway, expected);
    }
    return seen;
  }

  /** The current values of the series named by {@code wanted}'s keys. */
  private static Map<String, Double> metrics(TestGateway gateway, Map<String, Double> wanted)
      throws Exception {
    Map<String, Double> all = gateway.metrics();
    Map<String, Double> values = new HashMap<>();
    for (String series : wanted.keySet()) {
      Double v = all.get(series);
      assertNotNull(v, series + " is not in /metrics: " + all.keySet());
      values.put(series, v);
    }
    return values;
  }
}
