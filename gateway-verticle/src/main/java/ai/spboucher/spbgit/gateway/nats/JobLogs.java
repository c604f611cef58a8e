package ai.spboucher.spbgit.gateway.nats;

import ai.spboucher.spbgit.proto.JobEvent;
import ai.spboucher.spbgit.proto.Subjects;
import com.google.protobuf.InvalidProtocolBufferException;
import io.nats.client.Connection;
import io.nats.client.Dispatcher;
import io.nats.client.JetStreamApiException;
import io.nats.client.JetStreamSubscription;
import io.nats.client.Message;
import io.nats.client.PullSubscribeOptions;
import io.nats.client.PushSubscribeOptions;
import io.nats.client.api.AckPolicy;
import io.nats.client.api.ConsumerConfiguration;
import io.nats.client.api.ConsumerInfo;
import io.nats.client.api.DeliverPolicy;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.WorkerExecutor;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

/**
 * Reads jobs' events back from JetStream, which keeps them for the configured retention, so any
 * gateway instance can replay a finished job's log or follow a running one.
 *
 * <p>Threading: {@link #replay} reads on a thread of the replay pool it was given, which it holds
 * for the whole replay (more replays at once than the pool has threads wait for one), and hands
 * chunks to the context in batches, waiting for each batch to be written (backpressure). {@link
 * #follow} delivers on a NATS dispatcher thread: the listener must not block and is responsible for
 * hopping to its own context.
 */
public record JobLogs(Connection connection, WorkerExecutor replayPool) {

  private static final int BATCH = 256;
  private static final int CONSUMER_ATTEMPTS = 8;

  /**
   * @param replayPool where replays read: each holds one of its threads while it waits for NATS and
   *     the viewer
   */
  /**
   * Calls {@code onChunk} on {@code context} with every log chunk of the job, in sequence order,
   * and completes once the stream holds no more (the log so far, for a running job).
   */
  public Future<Void> replay(String jobId, Context context, Consumer<JobEvent> onChunk) {
    return replaySubject(Subjects.logEvents(jobId), context, onChunk);
  }

  /** Like {@link #replay}, for any one subject of a job (its model calls, its egress attempts). */
  public Future<Void> replaySubject(String subject, Context context, Consumer<JobEvent> onEvent) {
    Promise<Void> done = Promise.promise();
    replayPool.executeBlocking(
        () -> {
          try {
            JetStreamSubscription sub =
                createConsumer(
                    () ->
                        connection
                            .jetStream()
                            .subscribe(
                                subject,
                                PullSubscribeOptions.builder().stream(Subjects.EVENTS_STREAM)
                                    .configuration(
                                        ConsumerConfiguration.builder()
                                            .deliverPolicy(DeliverPolicy.All)
                                            .ackPolicy(AckPolicy.All)
                                            .inactiveThreshold(Duration.ofMinutes(1))
                                            .build())
                                    .build()));
            try {
              while (true) {
                List<Message> batch = sub.fetch(BATCH, Duration.ofMillis(300));
                if (batch.isEmpty()) {
                  break;
                }
                CountDownLatch written = new CountDownLatch(1);
                context.runOnContext(
                    v -> {
                      for (Message m : batch) {
                        onEvent.accept(parse(m));
                      }
                      written.countDown();
                    });
                written.await(60, TimeUnit.SECONDS);
                batch.get(batch.size() - 1).ack();
                if (batch.get(batch.size() - 1).metaData().pendingCount() == 0) {
                  break;
                }
              }
            } finally {
              sub.unsubscribe();
            }
            context.runOnContext(v -> done.complete());
          } catch (Exception e) {
            context.runOnContext(v -> done.fail(e));
          }
          return null;
        },
        false);
    return done.future();
  }

  /** A live subscription to one job's events; close it when the viewer goes. */
  public interface Follower extends AutoCloseable {

    /**
     * Whether the stream holds nothing more for this follower now: the server has no undelivered
     * event left and every event it delivered has reached the listener. Asks NATS: blocking.
     */
    boolean caughtUp() throws Exception;

    @Override
    void close();
  }

  /**
   * Delivers every event of the job (log chunks and status changes, in the order the runner
   * published them), from the beginning of the stream and then live. Each call carries the
   * message's pending count, so the listener can tell when it has caught up; that count is as of
   * the message's delivery, and {@link Follower#caughtUp} tells whether it still holds.
   */
  public Follower follow(String jobId, EventListener listener) throws Exception {
    Dispatcher dispatcher = connection.createDispatcher();
    AtomicLong lastConsumerSequence = new AtomicLong();
    JetStreamSubscription sub;
    try {
      sub =
          createConsumer(
              () ->
                  connection
                      .jetStream()
                      .subscribe(
                          "spb.events." + jobId + ".>",
                          dispatcher,
                          m -> {
                            listener.onEvent(parse(m), m.metaData().pendingCount());
                            lastConsumerSequence.set(m.metaData().consumerSequence());
                          },
                          false,
                          PushSubscribeOptions.builder().ordered(true).stream(
                                  Subjects.EVENTS_STREAM)
                              .build()));
    } catch (Exception e) {
      connection.closeDispatcher(dispatcher);
      throw e;
    }
    return new Follower() {
      @Override
      public boolean caughtUp() throws Exception {
        ConsumerInfo info = sub.getConsumerInfo();
        // Consumer sequences, not stream ones: a filtered consumer's stream position runs past
        // other jobs' events.
        return info.getNumPending() == 0
            && info.getDelivered().getConsumerSequence() <= lastConsumerSequence.get();
      }

      @Override
      public void close() {
        try {
          sub.unsubscribe();
        } finally {
          connection.closeDispatcher(dispatcher);
        }
      }
    };
  }

  /** Called on a NATS dispatcher thread. */
  @FunctionalInterface
  public interface EventListener {
    void onEvent(JobEvent event, long pending);
  }

  /** Creates a consumer; blocking. */
  @FunctionalInterface
  private interface ConsumerCreation {
    JetStreamSubscription create() throws IOException, JetStreamApiException;
  }

  /**
   * Creates an ephemeral consumer, again when JetStream does not answer. On a cluster, for a while
   * after a node dies, the server can still place a new consumer on the dead node, and the request
   * then times out; each attempt is placed afresh, so with one of three nodes down eight failures
   * in a row are very rare (about 1 in 6,500).
   */
  private static JetStreamSubscription createConsumer(ConsumerCreation creation)
      throws IOException, JetStreamApiException {
    for (int attempt = 1; ; attempt++) {
      try {
        return creation.create();
      } catch (IOException e) {
        if (attempt == CONSUMER_ATTEMPTS) {
          throw e;
        }
      }
    }
  }

  private static JobEvent parse(Message m) {
    try {
      return JobEvent.parseFrom(m.getData());
    } catch (InvalidProtocolBufferException e) {
      return JobEvent.getDefaultInstance();
    }
  }
}
