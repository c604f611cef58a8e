package ai.spboucher.spbgit.runner;

import ai.spboucher.spbgit.proto.JobEvent;
import ai.spboucher.spbgit.proto.Subjects;
import io.nats.client.Connection;
import io.nats.client.Dispatcher;
import io.nats.client.Nats;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Counts a job's numbered output lines as the runner publishes them, through a plain NATS
 * subscription to its log subject: it sees each chunk within milliseconds, so a test can strike
 * while the job is mid-stream (reading the stream back takes too long for that). Retries of a chunk
 * may be counted twice; it only tells when to act.
 *
 * <p>Threading: chunks are counted on a NATS dispatcher thread; {@link #await} polls from the test
 * thread.
 */
final class LiveLines implements AutoCloseable {

  private final Connection connection;
  private final AtomicInteger lines = new AtomicInteger();

  private LiveLines(Connection connection) {
    this.connection = connection;
  }

  static LiveLines watch(JobTestBed bed, String jobId, String prefix) throws Exception {
    LiveLines live = new LiveLines(Nats.connect(bed.natsUrl()));
    Dispatcher dispatcher =
        live.connection.createDispatcher(
            message -> {
              try {
                String text =
                    JobEvent.parseFrom(message.getData()).getLog().getData().toStringUtf8();
                live.lines.addAndGet((int) text.lines().filter(l -> l.startsWith(prefix)).count());
              } catch (com.google.protobuf.InvalidProtocolBufferException e) {
                // Not a log event: nothing to count.
              }
            });
    dispatcher.subscribe(Subjects.logEvents(jobId));
    live.connection.flush(Duration.ofSeconds(5));
    return live;
  }

  /** Waits until at least {@code count} lines went by; returns how many did. */
  int await(int count, Duration timeout) throws Exception {
    JobTestBed.awaitCondition(count + " published lines", timeout, () -> lines.get() >= count);
    return lines.get();
  }

  @Override
  public void close() {
    try {
      connection.close();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
