package ai.spboucher.spbgit.testsupport;

import io.vertx.core.json.JsonObject;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.WebSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A job's log websocket ({@code /api/v1/repos/<repo>/agent-jobs/<id>/logs?after=<seq>}) as a viewer
 * reads it: every frame, parsed, in the order it came, for the test to take. Threading: the JDK
 * client's listener thread adds frames; the test thread takes them.
 */
public final class LogFollower implements AutoCloseable {

  private static final HttpClient HTTP =
      HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

  private final WebSocket socket;
  private final LinkedBlockingQueue<JsonObject> frames;

  private LogFollower(WebSocket socket, LinkedBlockingQueue<JsonObject> frames) {
    this.socket = socket;
    this.frames = frames;
  }

  /**
   * Opens the log of job {@code id} of {@code repo} at {@code baseUrl} from after sequence {@code
   * after}, with the owner's {@code token} and {@code Origin} the gateway's own (as the page sends
   * it); waits up to 30 s for the handshake.
   */
  public static LogFollower open(String baseUrl, String token, String repo, String id, long after)
      throws Exception {
    LinkedBlockingQueue<JsonObject> frames = new LinkedBlockingQueue<>();
    WebSocket socket =
        HTTP.newWebSocketBuilder()
            .header("Authorization", "Bearer " + token)
            .header("Origin", baseUrl)
            .buildAsync(
                URI.create(
                    baseUrl.replace("http", "ws")
                        + "/api/v1/repos/"
                        + repo
                        + "/agent-jobs/"
                        + id
                        + "/logs?after="
                        + after),
                new WebSocket.Listener() {
                  private final StringBuilder partial = new StringBuilder();

                  @Override
                  public CompletionStage<?> onText(WebSocket ws, CharSequence data, boolean last) {
                    partial.append(data);
                    if (last) {
                      frames.add(new JsonObject(partial.toString()));
                      partial.setLength(0);
                    }
                    ws.request(1);
                    return CompletableFuture.completedFuture(null);
                  }
                })
            .get(30, TimeUnit.SECONDS);
    return new LogFollower(socket, frames);
  }

  public WebSocket socket() {
    return socket;
  }

  /** The next {@code count} {@code log} frames, each within 60 s; other frames are skipped. */
  public List<JsonObject> take(int count) throws InterruptedException {
    List<JsonObject> logs = new ArrayList<>();
    while (logs.size() < count) {
      JsonObject frame = frames.poll(60, TimeUnit.SECONDS);
      if (frame == null) {
        throw new AssertionError("no frame within 60 s after " + logs.size());
      }
      if ("log".equals(frame.getString("type"))) {
        logs.add(frame);
      }
    }
    return logs;
  }

  /** Adds the {@code log} frames to {@code logs} until the {@code end} frame, which it returns. */
  public JsonObject readUntilEnd(List<JsonObject> logs) throws InterruptedException {
    while (true) {
      JsonObject frame = frames.poll(90, TimeUnit.SECONDS);
      if (frame == null) {
        throw new AssertionError("no end frame; got " + logs.size() + " log frames");
      }
      switch (frame.getString("type")) {
        case "log" -> logs.add(frame);
        case "end" -> {
          return frame;
        }
        default -> {}
      }
    }
  }

  /** The {@code log} frames that come until none has for {@code quiet}. */
  public List<JsonObject> logsUntilQuiet(Duration quiet) throws InterruptedException {
    List<JsonObject> logs = new ArrayList<>();
    JsonObject frame;
    while ((frame = frames.poll(quiet.toMillis(), TimeUnit.MILLISECONDS)) != null) {
      if ("log".equals(frame.getString("type"))) {
        logs.add(frame);
      }
    }
    return logs;
  }

  /** Drops the connection without a close handshake. */
  @Override
  public void close() {
    socket.abort();
  }
}
