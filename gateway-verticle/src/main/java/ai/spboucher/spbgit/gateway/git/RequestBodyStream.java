package ai.spboucher.spbgit.gateway.git;

import io.vertx.core.Context;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpServerRequest;
import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A blocking {@link InputStream} over a Vert.x request body, so JGit can read a push as it arrives
 * without the gateway ever holding it whole. Flow control: the request is paused once {@link
 * #HIGH_WATER} bytes wait unread and resumed (on its own context) when the reader drains below
 * {@link #LOW_WATER}.
 *
 * <p>Threading: {@link #attach} runs on the request's event loop; {@code read} runs on one worker
 * thread.
 */
final class RequestBodyStream extends InputStream {

  static final long HIGH_WATER = 1 << 20;
  static final long LOW_WATER = 256 << 10;
  private static final long IDLE_TIMEOUT_SECONDS = 300;
  private static final Object END = new Object();

  private final HttpServerRequest request;
  private final Context context;
  private final long limit;
  private final BlockingQueue<Object> chunks = new LinkedBlockingQueue<>();
  private final AtomicLong queuedBytes = new AtomicLong();
  private final AtomicBoolean paused = new AtomicBoolean();
  private Buffer current;
  private int position;
  private long total;
  private boolean ended;

  private RequestBodyStream(HttpServerRequest request, Context context, long limit) {
    this.request = request;
    this.context = context;
    this.limit = limit;
  }

  /**
   * Starts consuming {@code request}'s body; call on its event loop before any asynchronous step.
   */
  static RequestBodyStream attach(HttpServerRequest request, Context context, long limit) {
    RequestBodyStream stream = new RequestBodyStream(request, context, limit);
    request.handler(stream::onChunk);
    request.endHandler(v -> stream.chunks.add(END));
    request.exceptionHandler(stream.chunks::add);
    request.resume();
    return stream;
  }

  /**
   * Makes the reader throw {@code cause} once it has read what already arrived, even while it
   * waits. Any thread.
   */
  void abort(RuntimeException cause) {
    chunks.add(new Abort(cause));
  }

  /** Queued by {@link #abort}: thrown as it is, not as a failure of the request. */
  private record Abort(RuntimeException cause) {}

  private void onChunk(Buffer chunk) {
    chunks.add(chunk);
    if (queuedBytes.addAndGet(chunk.length()) > HIGH_WATER && paused.compareAndSet(false, true)) {
      request.pause();
    }
  }

  @Override
  public int read(byte[] b, int off, int len) throws IOException {
    if (len == 0) {
      return 0;
    }
    if (!fill()) {
      return -1;
    }
    int n = Math.min(len, current.length() - position);
    current.getBytes(position, position + n, b, off);
    position += n;
    total += n;
    if (total > limit) {
      throw new BodyTooLargeException(limit);
    }
    return n;
  }

  @Override
  public int read() throws IOException {
    return ByteReads.one(this);
  }

  private boolean fill() throws IOException {
    while (!ended && (current == null || position >= current.length())) {
      Object next;
      try {
        next = chunks.poll(IDLE_TIMEOUT_SECONDS, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new InterruptedIOException("interrupted while reading the request body");
      }
      if (next == null) {
        throw new IOException("request body stalled for " + IDLE_TIMEOUT_SECONDS + " s");
      } else if (next == END) {
        ended = true;
      } else if (next instanceof Abort abort) {
        throw abort.cause();
      } else if (next instanceof Throwable t) {
        throw new IOException("request body failed: " + t.getMessage(), t);
      } else {
        current = (Buffer) next;
        position = 0;
        if (queuedBytes.addAndGet(-current.length()) < LOW_WATER
            && paused.compareAndSet(true, false)) {
          context.runOnContext(v -> request.resume());
        }
      }
    }
    return !ended;
  }
}
