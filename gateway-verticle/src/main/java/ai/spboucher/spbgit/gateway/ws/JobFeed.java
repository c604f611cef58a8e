package ai.spboucher.spbgit.gateway.ws;

import ai.spboucher.spbgit.gateway.jobs.Job;
import ai.spboucher.spbgit.gateway.nats.JobLogs;
import ai.spboucher.spbgit.proto.JobEvent;
import ai.spboucher.spbgit.proto.JobStatus;
import ai.spboucher.spbgit.proto.LogStream;
import io.vertx.core.Context;
import io.vertx.core.json.JsonObject;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * One job's events read from NATS once and shared by the job's viewers on this gateway: each event
 * is decoded and encoded as a websocket frame once, however many viewers there are. The feed keeps
 * the last {@link #WINDOW_BYTES} of log, so a viewer that (re)connects no further behind than that
 * starts from memory; one further behind gets a feed of its own, reading the job's events from the
 * start.
 *
 * <p>Threading: NATS delivers on the feed's dispatcher thread, which encodes each event there,
 * hands it to the context, and waits while {@link #MAX_IN_HAND_KIB} KiB of frames are in hand, so
 * that NATS's flow control rather than the heap absorbs a burst; viewers, the window and the feed's
 * state belong to the context. Both bounds are in bytes, not frames: a job printing flat out sends
 * 64 KiB chunks, and 1,024 of those held the gateway's heap at 160 MiB for one job with one viewer.
 */
final class JobFeed {

  static final long WINDOW_BYTES = 2L << 20;
  static final int MAX_IN_HAND_KIB = 2048;
  private static final long CATCH_UP_CHECK_MS = 1000;

  /**
   * One event as viewers send it: {@code seq} and {@code bytes} for log chunks, {@code exitReason}
   * for the end.
   */
  record Frame(long seq, long bytes, String text, String exitReason) {

    /** Null for the events viewers do not see (model calls, egress attempts). */
    static Frame of(JobEvent event) {
      if (event.hasLog()) {
        return new Frame(
            event.getSequence(),
            event.getLog().getData().size(),
            new JsonObject()
                .put("type", "log")
                .put("seq", event.getSequence())
                .put("stream", streamName(event.getLog().getStream()))
                .put("data", event.getLog().getData().toStringUtf8())
                .put("ts", event.getTimestampEpochMs())
                .encode(),
            null);
      }
      if (event.hasStatus() && event.getStatus().getStatus() == JobStatus.FINISHED) {
        return new Frame(0, 0, null, event.getStatus().getExitReason());
      }
      if (event.hasStatus()) {
        return new Frame(
            0,
            0,
            new JsonObject()
                .put("type", "status")
                .put("status", event.getStatus().getStatus().name().toLowerCase())
                .encode(),
            null);
      }
      return null;
    }
  }

  private final String jobId;
  private final Context context;
  private final Supplier<Optional<Job>> job;
  private final Consumer<JobFeed> onClose;
  private final List<LogSocket> viewers = new ArrayList<>();
  private final ArrayDeque<Frame> window = new ArrayDeque<>();
  private final Semaphore inHand = new Semaphore(MAX_IN_HAND_KIB);
  private long windowBytes;

  /**
   * The highest log sequence dropped from the window: viewers after it can start from the window.
   */
  private long evictedThrough;

  private String endedWith;
  private boolean closed;
  private boolean checkingCaughtUp;
  private long timer = -1;
  private JobLogs.Follower follower;
  private volatile boolean stopping;
  private volatile long lastEventAt = System.currentTimeMillis();
  private volatile long lastPending = -1;

  /** {@code onClose} runs on the context when the last viewer has gone (or NATS failed). */
  JobFeed(String jobId, Context context, Supplier<Optional<Job>> job, Consumer<JobFeed> onClose) {
    this.jobId = jobId;
    this.context = context;
    this.job = job;
    this.onClose = onClose;
  }

  /**
   * On the context: subscribes (off the event loop) and starts watching for an end the stream never
   * carries.
   */
  void start(JobLogs logs) {
    context
        .owner()
        .executeBlocking(() -> logs.follow(jobId, this::onEvent), false)
        .onSuccess(
            subscribed -> {
              follower = subscribed;
              if (closed) {
                closeFollower(); // Every viewer left while the subscription was being made.
              }
            })
        .onFailure(
            e -> {
              List.copyOf(viewers).forEach(LogSocket::fail);
              close();
            });
    // A job the gateway ended itself (lost runner, cancelled in the queue) has no end event in the
    // stream.
    timer = context.owner().setPeriodic(CATCH_UP_CHECK_MS, id -> endIfCaughtUpAndFinished());
  }

  /**
   * On the context: adds the viewer, first handing it what the window holds, unless the viewer is
   * further behind than the window reaches (false: it needs a feed of its own) or the feed has
   * closed.
   */
  boolean attach(LogSocket viewer, long after) {
    if (closed || after < evictedThrough) {
      return false;
    }
    viewers.add(viewer);
    viewer.follow(this);
    // A copy: a viewer that ends on the window's last frame leaves, and the feed may close and
    // clear the window.
    List.copyOf(window).forEach(viewer::offer);
    if (endedWith != null) {
      viewer.endWhenDrained(endedWith);
    }
    return true;
  }

  String jobId() {
    return jobId;
  }

  /** On the context: the viewer has gone; the feed closes with its last viewer. */
  void detach(LogSocket viewer) {
    viewers.remove(viewer);
    if (viewers.isEmpty()) {
      close();
    }
  }

  /** NATS dispatcher thread. */
  private void onEvent(JobEvent event, long streamPending) {
    lastEventAt = System.currentTimeMillis();
    lastPending = streamPending;
    Frame frame = Frame.of(event);
    if (frame == null || stopping) {
      return;
    }
    // Permits are KiB of frame text (at least one per frame, at most all of them for an outsized
    // one).
    int kib = frame.text() == null ? 1 : frame.text().length() >> 10;
    int permits = Math.min(MAX_IN_HAND_KIB, Math.max(1, kib));
    try {
      // Waiting here holds up this feed's dispatcher only; NATS then stops sending until it catches
      // up.
      while (!inHand.tryAcquire(permits, 100, TimeUnit.MILLISECONDS)) {
        if (stopping) {
          return;
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return;
    }
    context.runOnContext(
        v -> {
          inHand.release(permits);
          publish(frame);
        });
  }

  private void publish(Frame frame) {
    if (closed) {
      return;
    }
    window.add(frame);
    windowBytes += frame.bytes();
    while (windowBytes > WINDOW_BYTES && window.size() > 1) {
      Frame old = window.poll();
      windowBytes -= old.bytes();
      evictedThrough = Math.max(evictedThrough, old.seq());
    }
    if (frame.exitReason() != null) {
      endedWith = frame.exitReason();
    }
    // A copy: a viewer can end or be told to resume while it takes the frame, and leave the list.
    for (LogSocket viewer : List.copyOf(viewers)) {
      viewer.offer(frame);
    }
  }

  private void endIfCaughtUpAndFinished() {
    Optional<Job> current = job.get();
    boolean quiet = System.currentTimeMillis() - lastEventAt > CATCH_UP_CHECK_MS;
    JobLogs.Follower f = follower;
    if (f == null
        || closed
        || endedWith != null
        || checkingCaughtUp
        || current.isEmpty()
        || !current.get().isFinished()
        || !quiet
        || lastPending > 0
        || inHand.availablePermits() < MAX_IN_HAND_KIB) {
      return;
    }
    // lastPending was true when that event was sent: events stored since (NATS fell behind while
    // the job went
    // on and ended) would be cut off. Ask NATS whether anything is still on its way.
    checkingCaughtUp = true;
    context
        .owner()
        .executeBlocking(f::caughtUp, false)
        .onComplete(
            ar -> {
              checkingCaughtUp = false;
              if (ar.succeeded()
                  && ar.result()
                  && inHand.availablePermits() == MAX_IN_HAND_KIB
                  && endedWith == null) {
                endedWith = current.get().exitReason();
                List.copyOf(viewers).forEach(viewer -> viewer.endWhenDrained(endedWith));
              }
            });
  }

  private void close() {
    if (closed) {
      return;
    }
    closed = true;
    stopping = true;
    if (timer >= 0) {
      context.owner().cancelTimer(timer);
      timer = -1;
    }
    window.clear();
    closeFollower();
    onClose.accept(this);
  }

  private void closeFollower() {
    if (follower != null) {
      JobLogs.Follower f = follower;
      follower = null;
      // Unsubscribing talks to NATS: off the event loop.
      context
          .owner()
          .executeBlocking(
              () -> {
                f.close();
                return null;
              },
              false);
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
