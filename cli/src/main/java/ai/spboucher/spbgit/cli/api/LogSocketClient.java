package ai.spboucher.spbgit.cli.api;

import ai.spboucher.spbgit.cli.CliException;
import ai.spboucher.spbgit.cli.ExitCode;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import java.net.http.WebSocket;
import java.net.http.WebSocketHandshakeException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Follows one job's log over the gateway's websocket ({@code .../agent-jobs/:id/logs?after=<seq>})
 * until its {@code end} frame. Whenever the connection closes without one (a network drop, a
 * gateway restart, a {@code resume} frame for a slow reader, a silent half-open connection), it
 * reconnects with {@code after=<last seq received>}, so every chunk is delivered once and in order,
 * without gaps.
 *
 * <p>Threading: {@link #follow} blocks the calling thread and calls the {@link Sink} on it. The
 * websocket listener runs on the HTTP client's threads and only puts frames into a queue that
 * {@link #follow} drains.
 */
public final class LogSocketClient {

  /** Receives the log on the thread that called {@link #follow}. */
  public interface Sink {
    /**
     * A chunk of the job's output; {@code stream} is {@code stdout}, {@code stderr} or {@code
     * runner}.
     */
    void log(String stream, String data);

    /** The job changed status ({@code started}, ...). */
    default void status(String status) {}
  }

  /** How the log ended: the job's exit reason and the last sequence number received. */
  public record End(String exitReason, long lastSeq) {
    public boolean ok() {
      return "ok".equals(exitReason);
    }
  }

  /** After this long without a frame, ping; after as long again without any answer, reconnect. */
  static final Duration IDLE = Duration.ofSeconds(20);

  private static final Duration HANDSHAKE_TIMEOUT = Duration.ofSeconds(30);
  private static final Duration MAX_BACKOFF = Duration.ofSeconds(5);

  private final ApiClient api;
  private final String path;
  private final Duration giveUpAfter;
  private long lastSeq;

  /**
   * Gives up with {@link ExitCode#UNAVAILABLE} after {@code giveUpAfter} without a working
   * connection.
   */
  public LogSocketClient(ApiClient api, String repo, String jobId, Duration giveUpAfter) {
    this.api = api;
    this.path = ApiClient.jobPath(repo, jobId) + "/logs";
    this.giveUpAfter = giveUpAfter;
  }

  /**
   * Streams every chunk after {@code after} to {@code sink}, reconnecting as needed, until the
   * job's end.
   */
  public End follow(long after, Sink sink) throws InterruptedException {
    lastSeq = after;
    long backoffMs = 100;
    long failingSince = System.nanoTime();
    while (true) {
      Connection connection = connect();
      if (connection != null) {
        Outcome outcome = drain(connection, sink);
        if (outcome.end != null) {
          return outcome.end;
        }
        if (outcome.progressed) {
          backoffMs = 100;
          failingSince = System.nanoTime();
        }
      }
      if (System.nanoTime() - failingSince > giveUpAfter.toNanos()) {
        throw new CliException(
            ExitCode.UNAVAILABLE,
            "lost the job's log stream at "
                + api.baseUrl()
                + " and could not resume it within "
                + giveUpAfter.toSeconds()
                + " s (last sequence "
                + lastSeq
                + ")");
      }
      Thread.sleep(backoffMs);
      backoffMs = Math.min(backoffMs * 2, MAX_BACKOFF.toMillis());
    }
  }

  /**
   * The open connection, or null after a failure worth retrying; refusals (401, 403, 404, 400)
   * throw.
   */
  private Connection connect() throws InterruptedException {
    Connection connection = new Connection();
    try {
      connection.socket =
          api.openWebSocket(path + "?after=" + lastSeq, connection)
              .get(HANDSHAKE_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
      return connection;
    } catch (TimeoutException e) {
      return null;
    } catch (ExecutionException | CompletionException e) {
      if (e.getCause() instanceof WebSocketHandshakeException handshake) {
        int status = handshake.getResponse().statusCode();
        Object body = handshake.getResponse().body();
        CliException failure = ApiClient.failureOf(status, body instanceof String s ? s : null);
        if (status < 500) {
          throw failure;
        }
      }
      return null;
    }
  }

  private Outcome drain(Connection connection, Sink sink) throws InterruptedException {
    boolean progressed = false;
    boolean pinged = false;
    try {
      while (true) {
        Frame frame = connection.frames.poll(IDLE.toMillis(), TimeUnit.MILLISECONDS);
        if (frame == null) {
          if (pinged) {
            return new Outcome(null, progressed);
          }
          connection.socket.sendPing(ByteBuffer.allocate(0));
          pinged = true;
          continue;
        }
        pinged = false;
        if (frame.closed) {
          return new Outcome(null, progressed);
        }
        if (frame.text == null) {
          continue;
        }
        progressed = true;
        JsonNode node = parse(frame.text);
        switch (node.path("type").asText()) {
          case "log" -> {
            long seq = node.path("seq").asLong();
            if (seq > lastSeq) {
              lastSeq = seq;
              sink.log(node.path("stream").asText("stdout"), node.path("data").asText(""));
            }
          }
          case "status" -> sink.status(node.path("status").asText());
          case "end" -> {
            return new Outcome(new End(node.path("exit_reason").asText(null), lastSeq), true);
          }
          // "resume" and anything unknown: the gateway closes next, and we resume from lastSeq.
          default -> {}
        }
      }
    } finally {
      connection.socket.abort();
    }
  }

  private static JsonNode parse(String text) {
    try {
      return ApiClient.JSON.readTree(text);
    } catch (JsonProcessingException e) {
      throw new CliException(ExitCode.UNAVAILABLE, "the gateway sent a log frame that is not JSON");
    }
  }

  private record Outcome(End end, boolean progressed) {}

  /** A whole text message, a pong (text and closed both unset), or the end of the connection. */
  private record Frame(String text, boolean closed) {}

  /**
   * One websocket connection: its listener reassembles messages and queues them. HTTP client
   * threads.
   */
  private static final class Connection implements WebSocket.Listener {

    final BlockingQueue<Frame> frames = new LinkedBlockingQueue<>();
    private final StringBuilder partial = new StringBuilder();
    volatile WebSocket socket;

    @Override
    public CompletionStage<?> onText(WebSocket webSocket, CharSequence data, boolean last) {
      partial.append(data);
      if (last) {
        frames.add(new Frame(partial.toString(), false));
        partial.setLength(0);
      }
      webSocket.request(1);
      return null;
    }

    @Override
    public CompletionStage<?> onPong(WebSocket webSocket, ByteBuffer message) {
      frames.add(new Frame(null, false));
      webSocket.request(1);
      return null;
    }

    @Override
    public CompletionStage<?> onClose(WebSocket webSocket, int statusCode, String reason) {
      frames.add(new Frame(null, true));
      return null;
    }

    @Override
    public void onError(WebSocket webSocket, Throwable error) {
      frames.add(new Frame(null, true));
    }
  }
}
