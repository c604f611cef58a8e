package ai.spboucher.spbgit.builtinagent.model;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import ai.spboucher.spbgit.builtinagent.BreachSignal;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ModelHttpTest {
  private static final ObjectMapper JSON = new ObjectMapper();

  /**
   * Like the runner's endpoint behind socat, which keeps connections alive: back-to-back calls
   * share one connection (the client once asked for a new one per call, through JVM-wide
   * properties).
   */
  @Test
  void backToBackCallsShareOneKeptAliveConnection(@TempDir Path temp) throws Exception {
    AtomicInteger connections = new AtomicInteger();
    try (ServerSocket server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
      Thread answering = new Thread(() -> answerKeepingAlive(server, connections));
      answering.setDaemon(true);
      answering.start();
      ModelHttp http =
          new ModelHttp(
              URI.create("http://127.0.0.1:" + server.getLocalPort()),
              Duration.ofSeconds(10),
              new BreachSignal(temp.resolve("breach")),
              0,
              Duration.ZERO,
              line -> {});

      for (int i = 0; i < 50; i++) {
        assertEquals(
            i, http.post("/v1/x", Map.of(), JSON.createObjectNode().put("n", i)).get("n").asInt());
      }
    }
    assertEquals(1, connections.get(), "one connection for every call");
    assertNull(System.getProperty("jdk.httpclient.enableAllMethodRetry"), "no JVM-wide setting");
  }

  @Test
  void errorTextNamesTheProvidersTypeAndMessage() {
    assertEquals(
        "overloaded_error: Overloaded",
        ModelHttp.errorText(
            "{\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}"));
    assertEquals("upstream down", ModelHttp.errorText("{\"error\":\"upstream down\"}"));
    assertEquals("<html> bad gateway", ModelHttp.errorText("<html>\n\u001b bad gateway"));
    assertEquals("(empty body)", ModelHttp.errorText(""));
    assertEquals(
        "budget_exceeded",
        ModelHttp.errorType("{\"error\":{\"type\":\"budget_exceeded\",\"message\":\"x\"}}"));
  }

  private static void answerKeepingAlive(ServerSocket server, AtomicInteger connections) {
    while (!server.isClosed()) {
      try (Socket socket = server.accept()) {
        connections.incrementAndGet();
        while (true) {
          String body = readRequestBody(socket.getInputStream());
          byte[] answer = body.getBytes(StandardCharsets.UTF_8);
          OutputStream out = socket.getOutputStream();
          out.write(
              ("HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: "
                      + answer.length
                      + "\r\n\r\n")
                  .getBytes(StandardCharsets.US_ASCII));
          out.write(answer);
          out.flush();
        }
      } catch (IOException e) {
        // The client closed its connection (or the server socket closed): take the next.
      }
    }
  }

  private static String readRequestBody(InputStream in) throws IOException {
    ByteArrayOutputStream head = new ByteArrayOutputStream();
    while (!head.toString(StandardCharsets.US_ASCII).endsWith("\r\n\r\n")) {
      int b = in.read();
      if (b < 0) {
        throw new IOException("closed");
      }
      head.write(b);
    }
    int length = 0;
    for (String line : head.toString(StandardCharsets.US_ASCII).split("\r\n")) {
      if (line.toLowerCase(java.util.Locale.ROOT).startsWith("content-length:")) {
        length = Integer.parseInt(line.substring(15).trim());
      }
    }
    return new String(in.readNBytes(length), StandardCharsets.UTF_8);
  }
}
