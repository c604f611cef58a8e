package ai.spboucher.spbgit.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import ai.spboucher.spbgit.testsupport.Stack;
import io.vertx.core.json.JsonObject;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.WebSocket;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Websocket log viewers under the connection guard: a viewer of a quiet job outlives the head
 * timeout many times, and a viewer that closes gives its slot back, although Vert.x reports no
 * close of an upgraded connection.
 */
class LogViewerSlotsIT {

  private static final int PER_ADDRESS = 5;

  @TempDir static Path tmp;
  static Stack stack;
  static TestGateway gateway;
  static String logs;
  static final HttpClient client =
      HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

  @BeforeAll
  static void start() throws Exception {
    stack =
        Stack.builder(tmp)
            .nats()
            .gateway(
                new JsonObject()
                    .put("headTimeout", "1s")
                    .put("maxConnectionsPerAddress", String.valueOf(PER_ADDRESS)))
            .start();
    gateway = stack.gateway(TestGateway.class);
    stack.createRepo("demo", "work");
    // No runner takes it: the job stays queued and its log quiet.
    var created =
        gateway.api(
            "POST",
            "/api/v1/repos/demo/agent-jobs",
            gateway.ownerToken,
            "{\"task\":\"wait\",\"exec\":\"true\"}");
    assertEquals(201, created.statusCode(), created.body());
    logs =
        "/api/v1/repos/demo/agent-jobs/" + new JsonObject(created.body()).getString("id") + "/logs";
  }

  @AfterAll
  static void stop() throws Exception {
    stack.close();
  }

  @Test
  void viewersOutliveTheHeadTimeoutAndGiveTheirSlotsBackWhenTheyClose() throws Exception {
    List<Viewer> viewers = new ArrayList<>();
    for (int i = 0; i < PER_ADDRESS - 2; i++) {
      viewers.add(Viewer.open());
    }
    Thread.sleep(3_000);
    for (Viewer viewer : viewers) {
      assertFalse(
          viewer.closed.isDone(), "a quiet viewer was closed: " + viewer.closed.getNow(null));
      viewer.socket.sendClose(WebSocket.NORMAL_CLOSURE, "done").get(5, TimeUnit.SECONDS);
      viewer.closed.get(5, TimeUnit.SECONDS);
    }
    // Twice the per-address cap, one after the other: each one's slot must have come back.
    for (int i = 0; i < 2 * PER_ADDRESS; i++) {
      Viewer viewer = Viewer.open();
      viewer.socket.abort();
      Thread.sleep(1_200);
    }
    assertEquals(200, gateway.api("GET", "/api/v1/repos", gateway.ownerToken, null).statusCode());
  }

  /** One websocket viewer and how it ended. */
  private record Viewer(WebSocket socket, CompletableFuture<String> closed) {
    static Viewer open() throws Exception {
      CompletableFuture<String> closed = new CompletableFuture<>();
      WebSocket socket =
          client
              .newWebSocketBuilder()
              .header("Authorization", "Bearer " + gateway.ownerToken)
              .buildAsync(
                  URI.create(gateway.baseUrl.replace("http:", "ws:") + logs),
                  new WebSocket.Listener() {
                    @Override
                    public CompletionStage<?> onClose(
                        WebSocket webSocket, int statusCode, String reason) {
                      closed.complete(statusCode + " " + reason);
                      return null;
                    }

                    @Override
                    public void onError(WebSocket webSocket, Throwable error) {
                      closed.complete(error.toString());
                    }
                  })
              .get(10, TimeUnit.SECONDS);
      return new Viewer(socket, closed);
    }
  }
}
