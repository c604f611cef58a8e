package ai.spboucher.spbgit.runner;

import ai.spboucher.spbgit.proto.LogStream;
import ai.spboucher.spbgit.runner.nats.EventPublisher;
import com.github.dockerjava.api.model.Frame;
import com.github.dockerjava.api.model.StreamType;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * Carries a container's output to NATS: docker-java's stream thread offers frames, one pump thread
 * coalesces consecutive frames of the same stream (up to {@link #MAX_CHUNK} bytes, or until the
 * chunk's first byte has waited {@link #LINGER_MS}) and publishes them in order. The bounded queue
 * pushes back on the docker stream when NATS is slow instead of growing.
 *
 * <p>Two bounds keep a flood harmless, and neither is silent: a line longer than {@link #MAX_LINE}
 * bytes is split by inserting a newline (so no viewer ever has to lay out a megabyte line), and
 * once the job's log reaches its cap, further output is counted but not kept, and the log says so,
 * then and at the end.
 */
final class LogPump {

  static final int MAX_CHUNK = 64 << 10;

  /** The longest line kept as one line; longer lines are split at this many bytes. */
  public static final int MAX_LINE = 16 << 10;

  static final long LINGER_MS = 20;
  private static final Object END = new Object();

  /**
   * Where chunks go: the job's {@link EventPublisher#log}, which blocks until JetStream has stored
   * them.
   */
  interface ChunkSink {
    void publish(LogStream stream, byte[] data);
  }

  private final ChunkSink publisher;
  private final long capBytes;
  private long keptBytes;
  private long droppedBytes;
  private boolean capAnnounced;
  private final Map<LogStream, Integer> lineLength = new EnumMap<>(LogStream.class);
  private final BlockingQueue<Object> frames = new ArrayBlockingQueue<>(4096);
  private final CountDownLatch drained = new CountDownLatch(1);
  private final Thread thread;

  LogPump(ChunkSink publisher, String jobId, long capBytes) {
    this.publisher = publisher;
    this.capBytes = capBytes;
    this.thread = new Thread(this::pump, "spb-logs-" + jobId);
    this.thread.setDaemon(true);
    this.thread.start();
  }

  /**
   * Called on docker-java's stream thread, which may reuse the frame's buffer once this returns.
   */
  void offer(Frame frame) {
    put(new Frame(frame.getStreamType(), frame.getPayload().clone()));
  }

  /** A line the runner itself adds to the job's log. */
  void runnerLine(String line) {
    put(new RunnerLine(line));
  }

  /**
   * Like {@link #runnerLine}, but never waits: the line is dropped (false) when the queue is full.
   */
  boolean offerRunnerLine(String line) {
    return frames.offer(new RunnerLine(line));
  }

  /**
   * No more lines will come; returns once everything queued is published, or the timeout passes.
   */
  boolean close(long timeoutMs) throws InterruptedException {
    put(END);
    return drained.await(timeoutMs, TimeUnit.MILLISECONDS);
  }

  private void put(Object item) {
    try {
      frames.put(item);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private record RunnerLine(String line) {}

  private void pump() {
    ByteArrayOutputStream chunk = new ByteArrayOutputStream();
    LogStream chunkStream = null;
    // When the chunk's first byte has waited LINGER_MS. Counted from the first byte, not from the
    // latest: a
    // steady trickle of output would otherwise hold a chunk back until it reached MAX_CHUNK.
    long flushAt = 0;
    try {
      while (true) {
        Object item =
            chunk.size() == 0
                ? frames.take()
                : frames.poll(Math.max(0, flushAt - System.nanoTime()), TimeUnit.NANOSECONDS);
        if (item == null || item == END || item instanceof RunnerLine) {
          flush(chunk, chunkStream);
          chunkStream = null;
          if (item == END) {
            if (droppedBytes > 0) {
              publishRunnerLine(
                  "log cap reached: " + droppedBytes + " more bytes of output were not kept");
            }
            return;
          }
          if (item instanceof RunnerLine r) {
            publishRunnerLine(r.line());
          }
          continue;
        }
        Frame frame = (Frame) item;
        LogStream stream =
            frame.getStreamType() == StreamType.STDERR ? LogStream.STDERR : LogStream.STDOUT;
        if (chunkStream != null
            && (stream != chunkStream || chunk.size() + frame.getPayload().length > MAX_CHUNK)) {
          flush(chunk, chunkStream);
        }
        chunkStream = stream;
        boolean wasEmpty = chunk.size() == 0;
        append(chunk, stream, frame.getPayload());
        if (wasEmpty) {
          flushAt = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(LINGER_MS);
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } finally {
      drained.countDown();
    }
  }

  /**
   * Appends within the cap, splitting over-long lines. Copies runs of bytes (up to the next
   * newline, the line limit or the cap) rather than byte by byte: this runs for every byte a job
   * prints.
   */
  private void append(ByteArrayOutputStream chunk, LogStream stream, byte[] payload) {
    int length = lineLength.getOrDefault(stream, 0);
    int i = 0;
    while (i < payload.length) {
      if (keptBytes >= capBytes) {
        droppedBytes += payload.length - i;
        break;
      }
      if (length == MAX_LINE && payload[i] != '\n') {
        chunk.write('\n');
        keptBytes++;
        length = 0;
      }
      // At least one byte: a newline right at the line limit ends the line instead of splitting it.
      int room = (int) Math.max(1, Math.min(MAX_LINE - length, capBytes - keptBytes));
      int end = Math.min(payload.length, i + room);
      int newline = indexOf(payload, (byte) '\n', i, end);
      if (newline >= 0) {
        end = newline + 1;
        length = 0;
      } else {
        length += end - i;
      }
      chunk.write(payload, i, end - i);
      keptBytes += end - i;
      i = end;
      if (keptBytes >= capBytes && !capAnnounced) {
        capAnnounced = true;
        flush(chunk, stream);
        publishRunnerLine("log cap of " + capBytes + " bytes reached: further output is not kept");
      }
    }
    lineLength.put(stream, length);
  }

  private static int indexOf(byte[] bytes, byte b, int from, int to) {
    for (int i = from; i < to; i++) {
      if (bytes[i] == b) {
        return i;
      }
    }
    return -1;
  }

  private void publishRunnerLine(String line) {
    publisher.publish(
        LogStream.RUNNER, ("[spb-runner] " + line + "\n").getBytes(StandardCharsets.UTF_8));
  }

  private void flush(ByteArrayOutputStream chunk, LogStream stream) {
    if (chunk.size() > 0 && stream != null) {
      publisher.publish(stream, chunk.toByteArray());
    }
    chunk.reset();
  }
}
