package ai.spboucher.spbgit.runner;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import ai.spboucher.spbgit.gateway.audit.AuditLog;
import ai.spboucher.spbgit.proto.AuditChain;
import ai.spboucher.spbgit.proto.JobEvent;
import ai.spboucher.spbgit.proto.Subjects;
import ai.spboucher.spbgit.runner.docker.DockerSandbox;
import ai.spboucher.spbgit.runner.docker.SandboxSpec;
import com.github.dockerjava.api.model.Container;
import io.nats.client.Connection;
import io.nats.client.JetStreamApiException;
import io.nats.client.JetStreamSubscription;
import io.nats.client.Message;
import io.nats.client.Nats;
import io.nats.client.PullSubscribeOptions;
import io.nats.client.api.ConsumerConfiguration;
import io.nats.client.api.DeliverPolicy;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What the fault tests share: reading a job's log and progress from NATS, its containers, numbered
 * lines, and what every fault test checks once the dust has settled: each numbered output line
 * reached the gateway exactly once and in order, the audit log holds each of the job's events once
 * and its chain verifies, and no container of the job is left.
 */
final class FaultChecks {

  private FaultChecks() {}

  /**
   * The sequence of the job's last log chunk in the stream, or 0 before the first: a running job's
   * progress, read without waiting for its log to end (which {@link JobTestBed#log} does).
   */
  static long lastLogChunk(String natsUrl, String jobId) throws Exception {
    try (Connection connection = Nats.connect(natsUrl)) {
      return JobEvent.parseFrom(
              connection
                  .jetStreamManagement()
                  .getLastMessage(Subjects.EVENTS_STREAM, Subjects.logEvents(jobId))
                  .getData())
          .getSequence();
    } catch (JetStreamApiException e) {
      return 0;
    }
  }

  /**
   * The job's whole log from NATS, in sequence order; asserts the sequence has no gap and no
   * repeat.
   */
  static String log(String natsUrl, String jobId) throws Exception {
    StringBuilder out = new StringBuilder();
    try (Connection connection = Nats.connect(natsUrl)) {
      JetStreamSubscription sub =
          connection
              .jetStream()
              .subscribe(
                  Subjects.logEvents(jobId),
                  PullSubscribeOptions.builder().stream(Subjects.EVENTS_STREAM)
                      .configuration(
                          ConsumerConfiguration.builder().deliverPolicy(DeliverPolicy.All).build())
                      .build());
      long expected = 1;
      for (List<Message> batch = sub.fetch(500, Duration.ofMillis(500));
          !batch.isEmpty();
          batch = sub.fetch(500, Duration.ofMillis(500))) {
        for (Message m : batch) {
          JobEvent event = JobEvent.parseFrom(m.getData());
          assertEquals(expected++, event.getSequence(), "log sequence of job " + jobId);
          out.append(event.getLog().getData().toStringUtf8());
          m.ack();
        }
      }
    }
    return out.toString();
  }

  /**
   * A runner id no other test run on this machine uses: runners reclaim the containers labelled
   * with their id, and the Docker engine is shared.
   */
  static String uniqueRunnerId(String name) {
    return name + "-" + Long.toString(System.nanoTime() % 1_000_000_000L, 36);
  }

  /**
   * Asserts a pushed job's audit events: created and dispatched, then started and refs_written in
   * either order (the push and the runner's STARTED event reach the gateway by different paths),
   * then finished; each once.
   */
  static void assertPushedJobAuditedOnce(List<String> events) {
    assertEquals(5, events.size(), events.toString());
    assertEquals(List.of("job_created", "job_dispatched"), events.subList(0, 2), events.toString());
    assertEquals(
        java.util.Set.of("job_started", "refs_written"),
        java.util.Set.copyOf(events.subList(2, 4)),
        events.toString());
    assertEquals("job_finished", events.get(4), events.toString());
  }

  /** Containers of the job, in any state, on the machine's Docker engine. */
  static List<Container> jobContainers(String jobId) throws Exception {
    try (DockerSandbox docker = new DockerSandbox("unix:///var/run/docker.sock")) {
      return docker
          .client()
          .listContainersCmd()
          .withShowAll(true)
          .withLabelFilter(Map.of(SandboxSpec.JOB_LABEL, jobId))
          .exec();
    }
  }

  /**
   * Asserts that the lines {@code <prefix><n>} in {@code log} count 1, 2, 3, ... each exactly once
   * and in order, and that there are at least {@code atLeast}; returns how many there are.
   */
  static int assertNumberedLinesOnce(String log, String prefix, int atLeast) {
    Matcher lines = Pattern.compile("(?m)^" + Pattern.quote(prefix) + "(\\d+)$").matcher(log);
    int expected = 1;
    while (lines.find()) {
      assertEquals(
          expected++,
          Integer.parseInt(lines.group(1)),
          "'" + prefix + "' lines in order, none lost or " + "repeated");
    }
    assertTrue(
        expected - 1 >= atLeast,
        "at least " + atLeast + " '" + prefix + "' lines in the log:\n" + log);
    return expected - 1;
  }

  /**
   * A job command printing {@code prefix1} to {@code prefixN}, {@code perPause} lines at a time
   * with {@code pauseSeconds} between the bursts (the pause is the only process it forks).
   */
  static String numberedLines(String prefix, int count, int perPause, String pauseSeconds) {
    return "i=0; while [ $i -lt "
        + count
        + " ]; do i=$((i+1)); echo "
        + prefix
        + "$i; "
        + "if [ $((i % "
        + perPause
        + ")) -eq 0 ]; then sleep "
        + pauseSeconds
        + "; fi; done";
  }

  /**
   * Asserts that the lines of {@code text} starting with {@code prefix} are exactly
   * prefix1..prefixN, in order.
   */
  static void assertEachLineOnce(String text, String prefix, int count, String where) {
    List<String> lines = text.lines().filter(l -> l.startsWith(prefix)).toList();
    for (int i = 0; i < Math.min(lines.size(), count); i++) {
      if (!lines.get(i).equals(prefix + (i + 1))) {
        fail(
            where
                + ": line "
                + (i + 1)
                + " is '"
                + lines.get(i)
                + "', expected '"
                + prefix
                + (i + 1)
                + "' (a line lost or repeated)");
      }
    }
    assertEquals(count, lines.size(), where + ": numbered lines");
  }

  /**
   * The job's log as the gateway serves it ({@code GET .../log}), once it answers: right after a
   * NATS restart it can still be reconnecting.
   */
  static String gatewayLog(JobTestBed bed, String repo, String id) throws Exception {
    long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    HttpResponse<String> r = null;
    while (System.nanoTime() < deadline) {
      r =
          bed.gateway.api(
              "GET",
              "/api/v1/repos/" + repo + "/agent-jobs/" + id + "/log",
              bed.gateway.ownerToken,
              null);
      if (r.statusCode() == 200 && !r.body().isEmpty()) {
        return r.body();
      }
      Thread.sleep(250);
    }
    return fail(
        "the gateway served no log for job "
            + id
            + ": "
            + (r == null ? "" : r.statusCode() + " " + r.body()));
  }

  /**
   * Asserts the job's numbered lines reached the gateway once each, both in the log API and in the
   * raw stream (whose sequence {@link JobTestBed#log} checks for gaps), and that the two agree.
   */
  static void assertLogComplete(JobTestBed bed, String repo, String id, String prefix, int count)
      throws Exception {
    String published = bed.log(id);
    assertEachLineOnce(published, prefix, count, "the log events of job " + id);
    String served = gatewayLog(bed, repo, id);
    assertEachLineOnce(served, prefix, count, "the gateway's log of job " + id);
    assertEquals(published, served, "the gateway serves the log events as published");
  }

  /**
   * Asserts the job's audit events are exactly {@code expected} and the whole audit chain verifies.
   */
  static void assertAudited(JobTestBed bed, String id, List<String> expected) throws Exception {
    assertEquals(expected, bed.auditEvents(id), "audit events of job " + id);
    AuditChain.Result chain = AuditLog.verify(bed.auditLog());
    assertTrue(chain.ok(), chain.message());
  }

  /**
   * Asserts no container of the job exists, waiting a little for the runner's clean-up after
   * FINISHED.
   */
  static void assertNoContainerLeft(JobTestBed bed, String id) throws Exception {
    JobTestBed.awaitCondition(
        "no container of job " + id + " is left",
        Duration.ofSeconds(20),
        () -> bed.jobContainers(id).isEmpty());
  }
}
