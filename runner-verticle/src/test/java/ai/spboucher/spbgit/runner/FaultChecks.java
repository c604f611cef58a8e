package ai.spboucher.spbgit.runner;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

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
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** What the host-fault tests share: reading a job's log and progress from NATS, its containers, numbered lines. */
final class FaultChecks {

  private FaultChecks() {
  }

  /**
   * The sequence of the job's last log chunk in the stream, or 0 before the first: a running job's progress,
   * read without waiting for its log to end (which {@link JobTestBed#log} does).
   */
  static long lastLogChunk(String natsUrl, String jobId) throws Exception {
    try (Connection connection = Nats.connect(natsUrl)) {
      return JobEvent.parseFrom(connection.jetStreamManagement()
          .getLastMessage(Subjects.EVENTS_STREAM, Subjects.logEvents(jobId)).getData()).getSequence();
    } catch (JetStreamApiException e) {
      return 0;
    }
  }

  /** The job's whole log from NATS, in sequence order; asserts the sequence has no gap and no repeat. */
  static String log(String natsUrl, String jobId) throws Exception {
    StringBuilder out = new StringBuilder();
    try (Connection connection = Nats.connect(natsUrl)) {
      JetStreamSubscription sub = connection.jetStream().subscribe(Subjects.logEvents(jobId),
          PullSubscribeOptions.builder().stream(Subjects.EVENTS_STREAM).configuration(
              ConsumerConfiguration.builder().deliverPolicy(DeliverPolicy.All).build()).build());
      long expected = 1;
      for (List<Message> batch = sub.fetch(500, Duration.ofMillis(500)); !batch.isEmpty();
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
   * A runner id no other test run on this machine uses: runners reclaim the containers labelled with their id,
   * and the Docker engine is shared.
   */
  static String uniqueRunnerId(String name) {
    return name + "-" + Long.toString(System.nanoTime() % 1_000_000_000L, 36);
  }

  /**
   * Asserts a pushed job's audit events: created and dispatched, then started and refs_written in either order
   * (the push and the runner's STARTED event reach the gateway by different paths), then finished; each once.
   */
  static void assertPushedJobAuditedOnce(List<String> events) {
    assertEquals(5, events.size(), events.toString());
    assertEquals(List.of("job_created", "job_dispatched"), events.subList(0, 2), events.toString());
    assertEquals(java.util.Set.of("job_started", "refs_written"), java.util.Set.copyOf(events.subList(2, 4)),
        events.toString());
    assertEquals("job_finished", events.get(4), events.toString());
  }

  /** Containers of the job, in any state, on the machine's Docker engine. */
  static List<Container> jobContainers(String jobId) throws Exception {
    try (DockerSandbox docker = new DockerSandbox("unix:///var/run/docker.sock")) {
      return docker.client().listContainersCmd().withShowAll(true)
          .withLabelFilter(Map.of(SandboxSpec.JOB_LABEL, jobId)).exec();
    }
  }

  /**
   * Asserts that the lines {@code <prefix><n>} in {@code log} count 1, 2, 3, ... each exactly once and in order,
   * and that there are at least {@code atLeast}; returns how many there are.
   */
  static int assertNumberedLinesOnce(String log, String prefix, int atLeast) {
    Matcher lines = Pattern.compile("(?m)^" + Pattern.quote(prefix) + "(\\d+)$").matcher(log);
    int expected = 1;
    while (lines.find()) {
      assertEquals(expected++, Integer.parseInt(lines.group(1)), "'" + prefix + "' lines in order, none lost or "
          + "repeated");
    }
    assertTrue(expected - 1 >= atLeast, "at least " + atLeast + " '" + prefix + "' lines in the log:\n" + log);
    return expected - 1;
  }
}
