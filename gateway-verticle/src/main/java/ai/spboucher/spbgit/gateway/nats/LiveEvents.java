package ai.spboucher.spbgit.gateway.nats;

import ai.spboucher.spbgit.proto.JobEvent;
import ai.spboucher.spbgit.proto.Subjects;
import com.google.protobuf.InvalidProtocolBufferException;
import io.nats.client.Connection;
import io.nats.client.Dispatcher;
import io.nats.client.JetStreamApiException;
import io.nats.client.JetStreamSubscription;
import io.nats.client.MessageHandler;
import io.nats.client.PushSubscribeOptions;
import io.nats.client.api.ConsumerConfiguration;
import io.nats.client.api.DeliverPolicy;
import java.io.IOException;
import java.time.ZonedDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

/**
 * Every job's log chunks and egress attempts as runners store them, each handed to an observer
 * once: one ordered consumer per kind, starting at a given time. Viewers' replays read through
 * consumers of their own and never reach it, and an ordered consumer that reconnects resumes after
 * the last message it delivered, so no event is seen twice (a runner's duplicate publish is already
 * dropped by the stream's message-id window).
 *
 * <p>Threading: the observer runs on one NATS dispatcher thread, one event at a time; it must not
 * block.
 */
final class LiveEvents implements AutoCloseable {

  private static final System.Logger LOG = System.getLogger(LiveEvents.class.getName());

  private final Connection connection;
  private final Dispatcher dispatcher;
  private final List<JetStreamSubscription> subscriptions;

  private LiveEvents(
      Connection connection, Dispatcher dispatcher, List<JetStreamSubscription> subscriptions) {
    this.connection = connection;
    this.dispatcher = dispatcher;
    this.subscriptions = subscriptions;
  }

  /**
   * Subscribes to the events stored from {@code since} on. Blocking; the events stream must exist.
   */
  static LiveEvents subscribe(
      Connection connection, ZonedDateTime since, Consumer<JobEvent> observer)
      throws IOException, JetStreamApiException {
    MessageHandler handler =
        message -> {
          try {
            observer.accept(JobEvent.parseFrom(message.getData()));
          } catch (InvalidProtocolBufferException e) {
            LOG.log(
                System.Logger.Level.WARNING,
                "ignoring an unreadable job event on " + message.getSubject());
          }
        };
    Dispatcher dispatcher = connection.createDispatcher();
    List<JetStreamSubscription> subscriptions = new ArrayList<>();
    try {
      for (String subject : List.of(Subjects.ALL_LOG_EVENTS, Subjects.ALL_EGRESS_EVENTS)) {
        subscriptions.add(
            connection
                .jetStream()
                .subscribe(
                    subject,
                    dispatcher,
                    handler,
                    false,
                    PushSubscribeOptions.builder().stream(Subjects.EVENTS_STREAM)
                        .ordered(true)
                        .configuration(
                            ConsumerConfiguration.builder()
                                .deliverPolicy(DeliverPolicy.ByStartTime)
                                .startTime(since)
                                .build())
                        .build()));
      }
    } catch (IOException | JetStreamApiException | RuntimeException e) {
      connection.closeDispatcher(dispatcher);
      throw e;
    }
    return new LiveEvents(connection, dispatcher, List.copyOf(subscriptions));
  }

  /** Blocking: unsubscribing talks to NATS. */
  @Override
  public void close() {
    try {
      subscriptions.forEach(dispatcher::unsubscribe);
    } finally {
      connection.closeDispatcher(dispatcher);
    }
  }
}
