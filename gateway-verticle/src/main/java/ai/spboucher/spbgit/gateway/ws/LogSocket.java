package ai.spboucher.spbgit.gateway.ws;

import io.vertx.core.http.ServerWebSocket;
import io.vertx.core.json.JsonObject;
import java.util.ArrayDeque;

/**
 * One viewer of one job's log over a websocket: sends every chunk after {@code after}, then live
 * chunks, in sequence order, then an end frame with the final status. Frames come from the job's
 * {@link JobFeed}; when the socket cannot take more for now they wait in this viewer's queue until
 * it drains. Memory per viewer is bounded: if more than {@link #MAX_QUEUED} frames or {@link
 * #MAX_QUEUED_BYTES} of log wait (a viewer that keeps falling behind), it is told to resume from
 * the last sequence it was sent and the socket is closed; the runner and other viewers never wait
 * for it.
 *
 * <p>Threading: every method runs on the socket's context, which is also the feed's.
 */
final class LogSocket {

  static final int MAX_QUEUED = 2048;

  /** The most log data one viewer's queue holds before the viewer is told to resume. */
  static final long MAX_QUEUED_BYTES = 8L << 20;

  private final ServerWebSocket socket;
  private final ArrayDeque<JobFeed.Frame> queue = new ArrayDeque<>();
  private long queuedBytes;
  private long lastSent;
  private boolean closed;
  private String endWhenDrained;
  private JobFeed feed;

  LogSocket(ServerWebSocket socket, long after) {
    this.socket = socket;
    this.lastSent = after;
  }

  /** Called by the feed that accepted this viewer, before it hands it any frame. */
  void follow(JobFeed source) {
    feed = source;
    socket.closeHandler(v -> stop());
    socket.exceptionHandler(e -> stop());
  }

  /**
   * Queues the frame and writes what the socket takes. A momentarily full socket (a frame of a
   * large chunk alone can fill it) only pauses this viewer until it drains; reconnecting instead
   * would start it over.
   */
  void offer(JobFeed.Frame frame) {
    if (closed || (frame.seq() > 0 && frame.seq() <= lastSent)) {
      return;
    }
    queue.add(frame);
    queuedBytes += frame.bytes();
    if (queuedBytes > MAX_QUEUED_BYTES || queue.size() > MAX_QUEUED) {
      resume();
      return;
    }
    writeQueued();
  }

  /**
   * Ends the viewer once everything queued is written: the job is over and nothing more will come.
   */
  void endWhenDrained(String exitReason) {
    endWhenDrained = exitReason;
    writeQueued();
  }

  /** The job's events cannot be read: the viewer may try again later. */
  void fail() {
    if (!closed) {
      closed = true;
      socket.close((short) 1011, "cannot read the job log");
    }
  }

  private void writeQueued() {
    while (!queue.isEmpty() && !closed && !socket.writeQueueFull()) {
      JobFeed.Frame frame = queue.poll();
      queuedBytes -= frame.bytes();
      send(frame);
    }
    if (closed) {
      return;
    }
    if (!queue.isEmpty()) {
      socket.drainHandler(v -> writeQueued());
    } else if (endWhenDrained != null) {
      end(endWhenDrained);
    }
  }

  private void send(JobFeed.Frame frame) {
    if (socket.isClosed()) {
      stop();
    } else if (frame.exitReason() != null) {
      end(frame.exitReason());
    } else if (frame.seq() == 0) {
      socket.writeTextMessage(frame.text());
    } else if (frame.seq() > lastSent) {
      lastSent = frame.seq();
      socket.writeTextMessage(frame.text());
    }
  }

  private void end(String exitReason) {
    if (!closed) {
      closed = true;
      socket.writeTextMessage(
          new JsonObject()
              .put("type", "end")
              .put("status", "finished")
              .put("exit_reason", exitReason)
              .put("last_seq", lastSent)
              .encode());
      socket.close();
      feed.detach(this);
    }
  }

  /** The viewer fell behind: tell it where to pick up and let it reconnect. */
  private void resume() {
    if (!closed) {
      closed = true;
      socket.writeTextMessage(
          new JsonObject().put("type", "resume").put("after", lastSent).encode());
      socket.close((short) 1013, "resume after " + lastSent);
      feed.detach(this);
    }
  }

  private void stop() {
    if (!closed) {
      closed = true;
      feed.detach(this);
    }
  }
}
