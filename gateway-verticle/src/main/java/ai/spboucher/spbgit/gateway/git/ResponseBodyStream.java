package ai.spboucher.spbgit.gateway.git;

import io.vertx.core.Context;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpServerResponse;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.io.OutputStream;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

/**
 * A blocking {@link OutputStream} that JGit writes to from a worker thread and that streams to a
 * Vert.x response. Nothing reaches the client before the first flush of real data, so a failure
 * before then can still become an HTTP error status. At most {@link #IN_FLIGHT_BYTES} are queued
 * for a slow client; the writer then waits, which bounds the gateway's memory per clone.
 *
 * <p>Threading: written by one worker thread; every response call is made on the response's
 * context.
 */
final class ResponseBodyStream extends OutputStream {

  private static final int IN_FLIGHT_BYTES = 4 << 20;
  private static final int CHUNK = 64 << 10;
  private static final long STALL_TIMEOUT_SECONDS = 300;

  private final HttpServerResponse response;
  private final Context context;
  private final String contentType;
  private final long holdLimit;
  private final Semaphore inFlight = new Semaphore(IN_FLIGHT_BYTES);
  private final ByteArrayOutputStream pending = new ByteArrayOutputStream();
  private volatile boolean committed;
  private long written;
  private volatile Throwable failure;

  /**
   * @param holdLimit bytes kept back before the first send even across flushes; receive-pack holds
   *     its small report so an unpack failure can still answer 400 instead of a half-sent 200,
   *     upload-pack holds enough for JGit's ERR line about a bad request
   */
  ResponseBodyStream(
      HttpServerResponse response, Context context, String contentType, long holdLimit) {
    this.response = response;
    this.context = context;
    this.contentType = contentType;
    this.holdLimit = holdLimit;
  }

  /**
   * Whether any byte or header has been handed to the client; after that no error status can be
   * sent.
   */
  boolean committed() {
    return committed;
  }

  /** Bytes JGit has written so far, sent or not. */
  long bytesWritten() {
    return written;
  }

  @Override
  public void write(int b) throws IOException {
    write(new byte[] {(byte) b}, 0, 1);
  }

  @Override
  public void write(byte[] b, int off, int len) throws IOException {
    checkFailure();
    pending.write(b, off, len);
    written += len;
    if (pending.size() >= Math.max(CHUNK, holdLimit)) {
      send();
    }
  }

  @Override
  public void flush() throws IOException {
    if (pending.size() > holdLimit || committed) {
      send();
    }
  }

  /** Sends what is left and ends the response. */
  @Override
  public void close() throws IOException {
    send();
    boolean wasCommitted = committed;
    committed = true;
    context.runOnContext(
        v -> {
          if (!wasCommitted) {
            response.putHeader("Content-Type", contentType).putHeader("Cache-Control", "no-cache");
          }
          response.end();
        });
  }

  private void send() throws IOException {
    checkFailure();
    if (pending.size() == 0) {
      return;
    }
    byte[] bytes = pending.toByteArray();
    pending.reset();
    for (int off = 0; off < bytes.length; off += IN_FLIGHT_BYTES) {
      int len = Math.min(IN_FLIGHT_BYTES, bytes.length - off);
      acquire(len);
      Buffer chunk = Buffer.buffer(len).appendBytes(bytes, off, len);
      boolean first = !committed;
      committed = true;
      context.runOnContext(
          v -> {
            if (first) {
              response
                  .setChunked(true)
                  .putHeader("Content-Type", contentType)
                  .putHeader("Cache-Control", "no-cache");
            }
            response
                .write(chunk)
                .onComplete(
                    ar -> {
                      inFlight.release(len);
                      if (ar.failed()) {
                        failure = ar.cause();
                      }
                    });
          });
    }
  }

  private void acquire(int len) throws IOException {
    try {
      if (!inFlight.tryAcquire(len, STALL_TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
        throw new IOException("client stopped reading for " + STALL_TIMEOUT_SECONDS + " s");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new InterruptedIOException("interrupted while sending the response");
    }
    checkFailure();
  }

  private void checkFailure() throws IOException {
    Throwable t = failure;
    if (t != null) {
      throw new IOException("client connection failed: " + t.getMessage(), t);
    }
  }
}
