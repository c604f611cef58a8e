package ai.spboucher.spbgit.runner.model;

import ai.spboucher.spbgit.runner.sockets.JobSocketServer;
import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/**
 * One connection to a {@link ModelEndpoint}, served on one worker thread: read one request (head, then body),
 * have the endpoint answer it, write the answer, close. One request per connection ({@code Connection: close}).
 */
final class ModelExchange implements JobSocketServer.Connection {

  private static final System.Logger LOG = System.getLogger(ModelExchange.class.getName());
  private static final byte[] CONTINUE = "HTTP/1.1 100 Continue\r\n\r\n".getBytes(StandardCharsets.US_ASCII);
  private static final byte[] HEAD_END = {'\r', '\n', '\r', '\n'};
  private static final int MAX_CHUNK_LINE = 1024;
  private static final long LINGER_MAX_BYTES = 1 << 20;

  private final ModelEndpoint endpoint;
  private final SocketChannel client;
  private final Instant startedAt = Instant.now();
  private final long startNanos = System.nanoTime();
  private final ByteBuffer in = ByteBuffer.allocate(16 << 10);
  private volatile boolean timedOut;
  // Written and read only by the thread running run().
  private HttpHead head;
  private byte[] body = new byte[0];
  private boolean bodyTruncated;

  ModelExchange(ModelEndpoint endpoint, SocketChannel client) {
    this.endpoint = endpoint;
    this.client = client;
    in.flip();
  }

  @Override
  public void run() {
    ModelEndpoint.Outcome outcome = null;
    Future<?> watchdog = endpoint.timer().schedule(this::timeOut, ModelEndpoint.READ_TIMEOUT.toMillis(),
        TimeUnit.MILLISECONDS);
    try {
      outcome = serve(watchdog);
      watchdog = endpoint.timer().schedule(this::timeOut, ModelEndpoint.WRITE_TIMEOUT.toMillis(),
          TimeUnit.MILLISECONDS);
      write(outcome);
      lingerAndClose(watchdog);
    } catch (IOException e) {
      if (outcome == null && (head != null || in.limit() > 0)) {
        outcome = timedOut ? ModelEndpoint.Outcome.refused(new Refusal(408, "request_timeout",
            "request not complete within " + ModelEndpoint.READ_TIMEOUT.toSeconds() + " s"))
            : ModelEndpoint.Outcome.refused(new Refusal(400, "invalid_request_error", "connection ended: " + e));
      }
    } finally {
      watchdog.cancel(false);
      abort();
      if (outcome != null) {
        endpoint.record(new ModelCallRecord(startedAt, endpoint.provider().id(), endpoint.model(),
            head == null ? "" : head.method(), head == null ? "" : head.path(), outcome.status(), outcome.usage(),
            Duration.ofNanos(System.nanoTime() - startNanos), recordedRequest(), bodyTruncated || body.length
            > ModelEndpoint.RECORDED_REQUEST_BYTES, outcome.error(), outcome.forwarded(), outcome.answered(),
            outcome.bytesUp(), outcome.bytesDown()));
      }
    }
  }

  /** Reads the request and has the endpoint answer it; a refusal becomes the answer. */
  private ModelEndpoint.Outcome serve(Future<?> readWatchdog) throws IOException {
    try {
      head = HttpHead.parse(readHead());
      endpoint.route(head);
      readBody();
      readWatchdog.cancel(false);
      return endpoint.call(head, body);
    } catch (Refusal refusal) {
      return ModelEndpoint.Outcome.refused(refusal);
    }
  }

  /** Closes the connection on both sides; safe from any thread, idempotent. */
  @Override
  public void abort() {
    try {
      client.close();
    } catch (IOException e) {
      LOG.log(System.Logger.Level.DEBUG, "close failed: " + e);
    }
  }

  private void timeOut() {
    timedOut = true;
    abort();
  }

  private byte[] readHead() throws IOException, Refusal {
    int max = ModelEndpoint.MAX_HEAD_BYTES;
    byte[] seen = new byte[max + HEAD_END.length];
    int length = 0;
    while (true) {
      if (!in.hasRemaining()) {
        fill();
      }
      seen[length++] = in.get();
      if (length >= HEAD_END.length
          && Arrays.equals(seen, length - HEAD_END.length, length, HEAD_END, 0, HEAD_END.length)) {
        return Arrays.copyOf(seen, length - HEAD_END.length);
      }
      if (length > max) {
        throw new Refusal(431, "request_header_too_large", "request head larger than " + max + " bytes");
      }
    }
  }

  private void readBody() throws IOException, Refusal {
    int max = ModelEndpoint.MAX_BODY_BYTES;
    if (head.chunked()) {
      continueIfExpected();
      readChunked(max);
      return;
    }
    long length = head.contentLength();
    if (length > max) {
      bodyTruncated = length > 0;
      throw tooLarge();
    }
    if (length > 0) {
      continueIfExpected();
    }
    body = new byte[(int) length];
    readFully(body, 0, body.length);
  }

  private void readChunked(int max) throws IOException, Refusal {
    byte[] data = new byte[0];
    int length = 0;
    while (true) {
      String sizeLine = readLine();
      int semicolon = sizeLine.indexOf(';');
      String hex = (semicolon < 0 ? sizeLine : sizeLine.substring(0, semicolon)).strip();
      if (!hex.matches("[0-9A-Fa-f]{1,8}")) {
        throw Refusal.badRequest("malformed chunk size");
      }
      long size = Long.parseLong(hex, 16);
      if (size == 0) {
        while (!readLine().isEmpty()) {
          // Trailer fields carry nothing the endpoint uses.
        }
        body = Arrays.copyOf(data, length);
        return;
      }
      if (length + size > max) {
        body = Arrays.copyOf(data, length);
        bodyTruncated = true;
        throw tooLarge();
      }
      data = Arrays.copyOf(data, Math.max(data.length * 2, (int) (length + size)));
      readFully(data, length, (int) size);
      length += (int) size;
      if (!readLine().isEmpty()) {
        throw Refusal.badRequest("malformed chunk");
      }
    }
  }

  private static Refusal tooLarge() {
    return new Refusal(413, "request_too_large", "request body larger than " + ModelEndpoint.MAX_BODY_BYTES
        + " bytes");
  }

  private void continueIfExpected() throws IOException {
    if (head.expectsContinue()) {
      writeFully(ByteBuffer.wrap(CONTINUE));
    }
  }

  private String readLine() throws IOException, Refusal {
    StringBuilder line = new StringBuilder();
    while (true) {
      if (!in.hasRemaining()) {
        fill();
      }
      byte b = in.get();
      if (b == '\n') {
        int end = line.length();
        return end > 0 && line.charAt(end - 1) == '\r' ? line.substring(0, end - 1) : line.toString();
      }
      if (line.length() == MAX_CHUNK_LINE) {
        throw Refusal.badRequest("chunk line too long");
      }
      line.append((char) (b & 0xff));
    }
  }

  private void readFully(byte[] target, int offset, int length) throws IOException {
    int done = 0;
    while (done < length) {
      if (!in.hasRemaining()) {
        fill();
      }
      int n = Math.min(in.remaining(), length - done);
      in.get(target, offset + done, n);
      done += n;
    }
  }

  private void fill() throws IOException {
    in.clear();
    int n = client.read(in);
    in.flip();
    if (n < 0) {
      throw new EOFException("the agent closed the connection");
    }
  }

  /**
   * The body as sent, or, when longer than the record holds, its start and its end around a note of what was
   * left out. Each request repeats the whole transcript so far: the start holds the system prompt, the tools
   * and the task, the end what is new in this call (earlier calls' records hold what lies between).
   */
  private byte[] recordedRequest() {
    return recordedRequest(body, ModelEndpoint.RECORDED_REQUEST_BYTES);
  }

  static byte[] recordedRequest(byte[] body, int max) {
    if (body.length <= max) {
      return body;
    }
    int head = max / 8;
    String note = "\n\u2026 " + body.length + " bytes in all; " + (body.length - max) + "+ bytes in the middle are"
        + " not recorded \u2026\n";
    byte[] marker = note.getBytes(java.nio.charset.StandardCharsets.UTF_8);
    int tail = max - head - marker.length;
    byte[] recorded = Arrays.copyOf(body, max);
    System.arraycopy(marker, 0, recorded, head, marker.length);
    System.arraycopy(body, body.length - tail, recorded, head + marker.length, tail);
    return recorded;
  }

  private void write(ModelEndpoint.Outcome outcome) throws IOException {
    StringBuilder response = new StringBuilder("HTTP/1.1 ").append(outcome.status()).append(' ')
        .append(reason(outcome.status())).append("\r\n");
    for (Map.Entry<String, String> header : outcome.headers().entrySet()) {
      response.append(header.getKey()).append(": ").append(header.getValue().replaceAll("[\\x00-\\x1f\\x7f]", ""))
          .append("\r\n");
    }
    response.append("content-length: ").append(outcome.body().length).append("\r\n")
        .append("connection: close\r\n\r\n");
    byte[] headBytes = response.toString().getBytes(StandardCharsets.ISO_8859_1);
    writeFully(ByteBuffer.wrap(headBytes));
    writeFully(ByteBuffer.wrap(outcome.body()));
  }

  private void writeFully(ByteBuffer buffer) throws IOException {
    while (buffer.hasRemaining()) {
      client.write(buffer);
    }
  }

  /**
   * Closes after reading what the agent may still be sending (a body the endpoint refused unread): closing a
   * socket with unread input resets it, and the agent would lose the answer.
   */
  private void lingerAndClose(Future<?> writeWatchdog) throws IOException {
    writeWatchdog.cancel(false);
    client.shutdownOutput();
    Future<?> linger = endpoint.timer().schedule(this::abort, 1, TimeUnit.SECONDS);
    try {
      long discarded = 0;
      ByteBuffer sink = ByteBuffer.allocate(16 << 10);
      while (discarded < LINGER_MAX_BYTES) {
        sink.clear();
        int n = client.read(sink);
        if (n < 0) {
          break;
        }
        discarded += n;
      }
    } catch (IOException e) {
      // Closed by the linger timer or the agent: either way, done.
    } finally {
      linger.cancel(false);
    }
  }

  private static String reason(int status) {
    return switch (status) {
      case 200 -> "OK";
      case 400 -> "Bad Request";
      case 401 -> "Unauthorized";
      case 403 -> "Forbidden";
      case 404 -> "Not Found";
      case 408 -> "Request Timeout";
      case 413 -> "Content Too Large";
      case 429 -> "Too Many Requests";
      case 431 -> "Request Header Fields Too Large";
      case 500 -> "Internal Server Error";
      case 502 -> "Bad Gateway";
      case 503 -> "Service Unavailable";
      case 504 -> "Gateway Timeout";
      default -> "Status";
    };
  }
}
