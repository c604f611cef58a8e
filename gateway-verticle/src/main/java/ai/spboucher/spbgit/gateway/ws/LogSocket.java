package ai.spboucher.spbgit.gateway.ws;

import ai.spboucher.spbgit.gateway.jobs.Job;
import ai.spboucher.spbgit.gateway.nats.JobLogs;
import ai.spboucher.spbgit.proto.JobEvent;
import ai.spboucher.spbgit.proto.JobStatus;
import ai.spboucher.spbgit.proto.LogStream;
import io.vertx.core.Context;
import io.vertx.core.http.ServerWebSocket;
import io.vertx.core.json.JsonObject;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * One viewer of one job's log over a websocket: sends every chunk after {@code after}, then live chunks, in
 * sequence order, then an end frame with the final status. Memory per viewer is bounded: if more than
 * {@link #MAX_PENDING} frames wait (a slow viewer), it is told to resume from the last sequence it was sent and
 * the socket is closed; the runner and other viewers never wait for it.
 *
 * <p>Threading: NATS delivers on a dispatcher thread; every socket call happens on the socket's context.
 */
final class LogSocket {

  static final int MAX_PENDING = 2048;
  private static final long CATCH_UP_CHECK_MS = 1000;

  private final ServerWebSocket socket;
  private final Context context;
  private final Supplier<Optional<Job>> job;
  private final AtomicInteger pending = new AtomicInteger();
  private final AtomicBoolean closed = new AtomicBoolean();
  private volatile long lastSent;
  private volatile long lastEventAt = System.currentTimeMillis();
  private volatile long lastPending = -1;
  private JobLogs.Follower follower;
  private long timer = -1;

  LogSocket(ServerWebSocket socket, Context context, long after, Supplier<Optional<Job>> job) {
    this.socket = socket;
    this.context = context;
    this.job = job;
    this.lastSent = after;
  }

  /** Call on the socket's context. */
  void start(JobLogs logs) {
    socket.closeHandler(v -> stop());
    socket.exceptionHandler(e -> stop());
    String jobId = job.get().map(Job::id).orElseThrow();
    // Subscribing creates a JetStream consumer, a round trip to NATS: off the event loop.
    context.owner().executeBlocking(() -> logs.follow(jobId, this::onEvent), false)
        .onSuccess(subscribed -> {
          follower = subscribed;
          if (closed.get()) {
            release();  // The viewer left while the subscription was being made.
          }
        })
        .onFailure(e -> {
          if (closed.compareAndSet(false, true)) {
            socket.close((short) 1011, "cannot read the job log");
            release();
          }
        });
    // A job the gateway ended itself (lost runner, cancelled in the queue) has no end event in the stream.
    timer = context.owner().setPeriodic(CATCH_UP_CHECK_MS, id -> endIfCaughtUpAndFinished());
  }

  /** NATS dispatcher thread. */
  private void onEvent(JobEvent event, long streamPending) {
    lastEventAt = System.currentTimeMillis();
    lastPending = streamPending;
    if (closed.get()) {
      return;
    }
    if (pending.incrementAndGet() > MAX_PENDING) {
      context.runOnContext(v -> resume());
      return;
    }
    context.runOnContext(v -> {
      pending.decrementAndGet();
      deliver(event);
    });
  }

  private void deliver(JobEvent event) {
    if (closed.get() || socket.isClosed()) {
      stop();
      return;
    }
    if (event.hasLog()) {
      if (event.getSequence() <= lastSent) {
        return;
      }
      if (socket.writeQueueFull()) {
        resume();
        return;
      }
      lastSent = event.getSequence();
      socket.writeTextMessage(new JsonObject().put("type", "log").put("seq", event.getSequence())
          .put("stream", streamName(event.getLog().getStream())).put("data", event.getLog().getData().toStringUtf8())
          .put("ts", event.getTimestampEpochMs()).encode());
    } else if (event.hasStatus()) {
      JobStatus status = event.getStatus().getStatus();
      if (status == JobStatus.FINISHED) {
        end(event.getStatus().getExitReason());
      } else {
        socket.writeTextMessage(new JsonObject().put("type", "status")
            .put("status", status.name().toLowerCase()).encode());
      }
    }
  }

  private void endIfCaughtUpAndFinished() {
    Optional<Job> current = job.get();
    boolean quiet = System.currentTimeMillis() - lastEventAt > CATCH_UP_CHECK_MS;
    if (current.isPresent() && current.get().isFinished() && quiet && lastPending <= 0 && pending.get() == 0) {
      end(current.get().exitReason());
    }
  }

  private void end(String exitReason) {
    if (closed.compareAndSet(false, true)) {
      socket.writeTextMessage(new JsonObject().put("type", "end").put("status", "finished")
          .put("exit_reason", exitReason).put("last_seq", lastSent).encode());
      socket.close();
      release();
    }
  }

  /** The viewer fell behind: tell it where to pick up and let it reconnect. */
  private void resume() {
    if (closed.compareAndSet(false, true)) {
      socket.writeTextMessage(new JsonObject().put("type", "resume").put("after", lastSent).encode());
      socket.close((short) 1013, "resume after " + lastSent);
      release();
    }
  }

  private void stop() {
    closed.set(true);
    release();
  }

  private void release() {
    if (timer >= 0) {
      context.owner().cancelTimer(timer);
      timer = -1;
    }
    if (follower != null) {
      JobLogs.Follower f = follower;
      follower = null;
      // Unsubscribing talks to NATS: off the event loop.
      context.owner().executeBlocking(() -> {
        f.close();
        return null;
      }, false);
    }
  }

  private static String streamName(LogStream stream) {
    return switch (stream) {
      case STDERR -> "stderr";
      case RUNNER -> "runner";
      default -> "stdout";
    };
  }
}
