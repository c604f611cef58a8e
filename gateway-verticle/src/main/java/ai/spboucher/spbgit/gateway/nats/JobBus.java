package ai.spboucher.spbgit.gateway.nats;

import ai.spboucher.spbgit.common.NatsSettings;
import ai.spboucher.spbgit.gateway.jobs.JobQueue;
import ai.spboucher.spbgit.proto.CancelJob;
import ai.spboucher.spbgit.proto.JobEvent;
import ai.spboucher.spbgit.proto.JobRequest;
import ai.spboucher.spbgit.proto.Streams;
import ai.spboucher.spbgit.proto.Subjects;
import io.nats.client.Connection;
import io.nats.client.JetStream;
import io.nats.client.JetStreamApiException;
import io.nats.client.JetStreamSubscription;
import io.nats.client.Message;
import io.nats.client.Nats;
import io.nats.client.Options;
import io.nats.client.PublishOptions;
import io.nats.client.PullSubscribeOptions;
import io.nats.client.api.PublishAck;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.WorkerExecutor;
import java.io.IOException;
import java.security.GeneralSecurityException;
import java.time.Duration;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * The gateway's side of NATS: publishes job requests (deduplicated by job id) and cancels, signed
 * and with each job's token sealed to the runners ({@link JobBusSigner}), and consumes every job's
 * status changes and the runners' refusals of requests through durable consumers, so none is lost
 * while the gateway is down. It can also hand every log chunk and egress attempt stored since it
 * connected to an observer, once each ({@link #observe}). Reconnects forever; while disconnected,
 * {@link #isConnected} is false and the jobs API answers 503.
 *
 * <p>Threading: {@link #connect} and {@link #close} block. Each consumer runs on its own thread and
 * hands each event to the handler on the given Vert.x context, acknowledging it only when the
 * handler's future succeeds. The observer runs on a NATS dispatcher thread. A request is sealed and
 * signed on a worker thread of the publishing context.
 */
public final class JobBus implements JobQueue, AutoCloseable {

  private static final System.Logger LOG = System.getLogger(JobBus.class.getName());

  private final Connection connection;
  private final JetStream jetStream;
  private final Duration logRetention;
  private final int replicas;
  private final Duration jobAckWait;
  private final JobBusSigner signer;

  /**
   * Where observing starts: events stored before the gateway connected are not this process's to
   * see.
   */
  private final ZonedDateTime connectedAt = ZonedDateTime.now(ZoneOffset.UTC);

  private volatile boolean closing;
  private volatile Consumer<JobEvent> observer;
  private volatile LiveEvents live;
  private final List<Thread> consumers = new ArrayList<>();

  private JobBus(
      Connection connection,
      Duration logRetention,
      int replicas,
      Duration jobAckWait,
      JobBusSigner signer)
      throws IOException {
    this.connection = connection;
    // Made once: building a JetStream context parses the server's version and options each time.
    this.jetStream = connection.jetStream();
    this.logRetention = logRetention;
    this.replicas = replicas;
    this.jobAckWait = jobAckWait;
    this.signer = signer;
  }

  /**
   * Connects with the settings read at start-up, retrying until the server answers: call it on a
   * worker pool of its own (it can take as long as NATS is down), never on a shared one.
   */
  public static JobBus connect(
      NatsSettings nats, Duration logRetention, int replicas, JobBusSigner signer)
      throws IOException, InterruptedException {
    Options options;
    try {
      options =
          nats.options()
              .connectionName("spb-gateway")
              .maxReconnects(-1)
              .reconnectWait(Duration.ofSeconds(1))
              .build();
    } catch (GeneralSecurityException e) {
      throw new IOException("cannot set up TLS for NATS: " + e.getMessage(), e);
    }
    return new JobBus(
        Nats.connectReconnectOnConnect(options), logRetention, replicas, nats.jobAckWait(), signer);
  }

  /** Reading jobs' logs back from the events stream, on {@code replayPool}. */
  public JobLogs logs(WorkerExecutor replayPool) {
    return new JobLogs(connection, replayPool);
  }

  /**
   * Job requests no runner has taken yet, of every image (the work queue deletes a request once
   * taken), including those waiting for an image no runner offers. Blocking.
   */
  public long queueDepth() throws IOException, JetStreamApiException {
    return connection
        .jetStreamManagement()
        .getStreamInfo(Subjects.JOBS_STREAM)
        .getStreamState()
        .getMsgCount();
  }

  @Override
  public boolean isConnected() {
    return connection.getStatus() == Connection.Status.CONNECTED;
  }

  /**
   * Publishes a job request with its token sealed to the runners, signed; the future carries the
   * stream sequence it was stored at.
   */
  @Override
  public Future<Long> publish(JobRequest request, String jobToken, Context context) {
    // Sealing may re-read the runner keys' directory.
    return context
        .executeBlocking(() -> signer.request(request, jobToken), false)
        .compose(
            signed -> {
              CompletableFuture<PublishAck> ack =
                  jetStream.publishAsync(
                      Subjects.jobRequests(request),
                      signed.headers(),
                      signed.data(),
                      PublishOptions.builder().messageId(request.getJobId()).build());
              return Future.fromCompletionStage(ack.orTimeout(10, TimeUnit.SECONDS), context);
            })
        .map(PublishAck::getSeqno);
  }

  /**
   * Tells every runner to stop the job, and removes it from the queue if no runner took it yet.
   * Blocking.
   */
  @Override
  public boolean cancel(String jobId, long queueSequence) {
    JobBusSigner.Signed cancel =
        signer.cancel(CancelJob.newBuilder().setJobId(jobId).setReason("owner").build());
    connection.publish(Subjects.cancel(jobId), cancel.headers(), cancel.data());
    if (queueSequence <= 0) {
      return false;
    }
    try {
      return connection.jetStreamManagement().deleteMessage(Subjects.JOBS_STREAM, queueSequence);
    } catch (Exception e) {
      return false;
    }
  }

  /**
   * Hands every log chunk and egress attempt stored since this bus connected to {@code observer},
   * once each, on a NATS dispatcher thread (it must not block). It starts with the status consumer
   * ({@link #consumeStatus}), once the streams exist.
   */
  public void observe(Consumer<JobEvent> observer) {
    this.observer = observer;
  }

  /**
   * Starts consuming status events and refusals, each through its durable consumer on a thread of
   * its own; {@code handler} runs on {@code context}.
   */
  @Override
  public void consumeStatus(Context context, Function<JobEvent, Future<?>> handler) {
    consume(
        "spb-status-events",
        Subjects.ALL_STATUS_EVENTS,
        Subjects.GATEWAY_EVENTS_CONSUMER,
        true,
        context,
        handler);
    consume(
        "spb-refusal-events",
        Subjects.ALL_REFUSALS,
        Subjects.GATEWAY_REFUSALS_CONSUMER,
        false,
        context,
        handler);
  }

  private void consume(
      String name,
      String subject,
      String durable,
      boolean observes,
      Context context,
      Function<JobEvent, Future<?>> handler) {
    Thread consumer =
        new Thread(() -> consumeLoop(subject, durable, observes, context, handler), name);
    consumer.setDaemon(true);
    consumer.start();
    consumers.add(consumer);
  }

  /**
   * Fetches from {@code durable} (bound to {@code subject}) until closed; the one with {@code
   * observes} also starts the observer.
   */
  private void consumeLoop(
      String subject,
      String durable,
      boolean observes,
      Context context,
      Function<JobEvent, Future<?>> handler) {
    JetStreamSubscription subscription = null;
    while (!closing) {
      try {
        if (subscription == null) {
          if (!isConnected()) {
            Thread.sleep(250);
            continue;
          }
          Streams.ensure(
              connection.jetStreamManagement(), logRetention, replicas, jobAckWait, true);
          subscription =
              connection
                  .jetStream()
                  .subscribe(subject, PullSubscribeOptions.bind(Subjects.EVENTS_STREAM, durable));
        }
        if (observes && observer != null && live == null) {
          // Ordered consumers recover from disconnects by themselves: subscribe once, after
          // Streams.ensure.
          live = LiveEvents.subscribe(connection, connectedAt, observer);
        }
        List<Message> batch = subscription.fetch(100, Duration.ofSeconds(1));
        for (Message message : batch) {
          handleInOrder(message, context, handler);
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      } catch (Exception e) {
        if (!closing) {
          LOG.log(
              System.Logger.Level.WARNING,
              "job event consumer " + durable + " failed (retrying): " + e.getMessage());
        }
        subscription = null;
        sleepQuietly(1000);
      }
    }
  }

  /** One at a time, so a job's events are applied in the order its runner sent them. */
  private void handleInOrder(
      Message message, Context context, Function<JobEvent, Future<?>> handler)
      throws InterruptedException {
    JobEvent event;
    try {
      event = JobEvent.parseFrom(message.getData());
    } catch (IOException e) {
      LOG.log(System.Logger.Level.WARNING, "discarding an unreadable job event");
      message.term();
      return;
    }
    CountDownLatch done = new CountDownLatch(1);
    context.runOnContext(
        v ->
            handler
                .apply(event)
                .onComplete(
                    ar -> {
                      if (ar.succeeded()) {
                        message.ack();
                      } else {
                        LOG.log(
                            System.Logger.Level.WARNING,
                            "cannot record event of job "
                                + event.getJobId()
                                + ": "
                                + ar.cause().getMessage());
                        message.nakWithDelay(Duration.ofSeconds(1));
                      }
                      done.countDown();
                    }));
    done.await(60, TimeUnit.SECONDS);
  }

  private static void sleepQuietly(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  @Override
  public void close() throws InterruptedException {
    closing = true;
    for (Thread consumer : consumers) {
      consumer.interrupt();
    }
    for (Thread consumer : consumers) {
      consumer.join(5000);
    }
    try {
      if (live != null) {
        live.close();
      }
    } finally {
      connection.close();
    }
  }
}
