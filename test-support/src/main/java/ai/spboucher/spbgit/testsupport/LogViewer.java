package ai.spboucher.spbgit.testsupport;

import io.vertx.core.json.JsonObject;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.WebSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * A viewer of one job's live log over the gateway's websocket, following the same contract as the
 * proposal page's follower ({@code js/log-follow.js}): it remembers the last sequence it took,
 * drops anything at or below it, and when the socket closes without an {@code end} frame (for
 * example after a {@code resume} frame because it fell behind) it connects again with {@code
 * after=<last>}: at once if it made progress, otherwise backing off from 0.5 s to 5 s. Each
 * complete line is handed over with the wall-clock time its frame arrived.
 *
 * <p>Threading: the listener is called on the HTTP client's threads, one message at a time per
 * viewer.
 */
public final class LogViewer {

  /**
   * Receives each complete line of the job's output, with the time its (last) frame arrived and the
   * time the runner published that frame's chunk ({@code ts}, milliseconds).
   */
  @FunctionalInterface
  public interface LineSink {
    void line(String stream, String line, long arrivalMicros, long publishedMillis);
  }

  private static final ScheduledExecutorService RECONNECTS =
      Executors.newSingleThreadScheduledExecutor(
          r -> {
            Thread t = new Thread(r, "viewer-reconnect");
            t.setDaemon(true);
            return t;
          });

  private final HttpClient http;
  private final URI uri;
  private final String token;
  private final LineSink sink;
  private final Map<Stream, StringBuilder> partial = new EnumMap<>(Stream.class);
  private final CompletableFuture<JsonObject> end = new CompletableFuture<>();
  private long lastSeq;
  private long backoffMs = 500;
  private boolean resumeRequested;
  private int framesOnSocket;
  private volatile int connects;
  private volatile int resumes;
  private volatile long gaps;
  private volatile long duplicates;
  private volatile long bytes;
  private volatile long firstFrameMicros;
  private volatile long lastFrameMicros;

  /**
   * Per log frame taken: {seq, runner's ts in ms, arrival in µs, data length}; for finding where
   * time goes.
   */
  private final List<long[]> trace = Collections.synchronizedList(new ArrayList<>());

  private enum Stream {
    STDOUT,
    STDERR,
    RUNNER
  }

  public LogViewer(
      HttpClient http, String baseUrl, String repo, String jobId, String token, LineSink sink) {
    this.http = http;
    this.uri =
        URI.create(
            baseUrl.replaceFirst("^http", "ws")
                + "/api/v1/repos/"
                + repo
                + "/agent-jobs/"
                + jobId
                + "/logs");
    this.token = token;
    this.sink = sink;
  }

  /** Connects; the returned future completes once the first socket is open. */
  public CompletableFuture<WebSocket> start() {
    return connect();
  }

  private CompletableFuture<WebSocket> connect() {
    connects++;
    resumeRequested = false;
    framesOnSocket = 0;
    return http.newWebSocketBuilder()
        .header("Authorization", "Bearer " + token)
        .connectTimeout(Duration.ofSeconds(30))
        .buildAsync(URI.create(uri + "?after=" + lastSeq), new Listener())
        .whenComplete(
            (socket, error) -> {
              if (error != null) {
                scheduleReconnect();
              }
            });
  }

  /** Completes with the {@code end} frame. */
  public CompletableFuture<JsonObject> end() {
    return end;
  }

  public int connects() {
    return connects;
  }

  public int resumes() {
    return resumes;
  }

  public long gaps() {
    return gaps;
  }

  /**
   * Log frames the gateway sent at or below a sequence this viewer already had, which it dropped.
   */
  public long duplicates() {
    return duplicates;
  }

  /** Bytes of log data taken (every stream). */
  public long bytes() {
    return bytes;
  }

  public List<long[]> trace() {
    return trace;
  }

  public long firstFrameMicros() {
    return firstFrameMicros;
  }

  public long lastFrameMicros() {
    return lastFrameMicros;
  }

  private void onFrame(String text, long arrival) {
    JsonObject frame = new JsonObject(text);
    switch (frame.getString("type", "")) {
      case "log" -> onLog(frame, arrival);
      case "end" -> {
        flushPartials(arrival, 0);
        end.complete(frame);
      }
      case "resume" -> {
        resumeRequested = true;
        resumes++;
      }
      default -> {
        // Status frames carry nothing a viewer of the text needs.
      }
    }
  }

  private void onLog(JsonObject frame, long arrival) {
    long seq = frame.getLong("seq");
    if (seq <= lastSeq) {
      duplicates++;
      return;
    }
    if (seq > lastSeq + 1) {
      gaps += seq - lastSeq - 1;
    }
    lastSeq = seq;
    framesOnSocket++;
    backoffMs = 500;
    if (firstFrameMicros == 0) {
      firstFrameMicros = arrival;
    }
    lastFrameMicros = arrival;
    String data = frame.getString("data");
    bytes += data.length();
    trace.add(new long[] {seq, frame.getLong("ts", 0L), arrival, data.length()});
    Stream stream =
        switch (frame.getString("stream", "stdout")) {
          case "stderr" -> Stream.STDERR;
          case "runner" -> Stream.RUNNER;
          default -> Stream.STDOUT;
        };
    long published = frame.getLong("ts", 0L);
    StringBuilder buffer = partial.computeIfAbsent(stream, s -> new StringBuilder());
    int from = 0;
    for (int nl = data.indexOf('\n'); nl >= 0; nl = data.indexOf('\n', from)) {
      if (buffer.length() > 0) {
        buffer.append(data, from, nl);
        sink.line(stream.name().toLowerCase(), buffer.toString(), arrival, published);
        buffer.setLength(0);
      } else {
        sink.line(stream.name().toLowerCase(), data.substring(from, nl), arrival, published);
      }
      from = nl + 1;
    }
    buffer.append(data, from, data.length());
  }

  private void flushPartials(long arrival, long published) {
    partial.forEach(
        (stream, buffer) -> {
          if (buffer.length() > 0) {
            sink.line(stream.name().toLowerCase(), buffer.toString(), arrival, published);
            buffer.setLength(0);
          }
        });
  }

  private void onClosed() {
    if (end.isDone()) {
      return;
    }
    if (resumeRequested && framesOnSocket > 0) {
      connect();
    } else {
      scheduleReconnect();
    }
  }

  private void scheduleReconnect() {
    if (end.isDone()) {
      return;
    }
    long delay = backoffMs;
    backoffMs = Math.min(backoffMs * 2, 5000);
    RECONNECTS.schedule(this::connect, delay, TimeUnit.MILLISECONDS);
  }

  private final class Listener implements WebSocket.Listener {
    private final StringBuilder parts = new StringBuilder();

    @Override
    public CompletionStage<?> onText(WebSocket socket, CharSequence data, boolean last) {
      if (last && parts.length() == 0) {
        onFrame(data.toString(), WallClock.micros());
      } else {
        parts.append(data);
        if (last) {
          onFrame(parts.toString(), WallClock.micros());
          parts.setLength(0);
        }
      }
      socket.request(1);
      return null;
    }

    @Override
    public CompletionStage<?> onClose(WebSocket socket, int statusCode, String reason) {
      onClosed();
      return null;
    }

    @Override
    public void onError(WebSocket socket, Throwable error) {
      onClosed();
    }
  }
}
