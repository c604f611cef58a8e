package ai.spboucher.spbgit.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.spboucher.spbgit.gateway.http.HttpErrors;
import ai.spboucher.spbgit.testsupport.Stack;
import io.vertx.core.json.JsonObject;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Requests to the live-log websocket endpoint that are not websocket handshakes get a JSON client
 * error, and the gateway does not log them as server faults. Found by the load and abuse suite: a
 * plain GET was answered 500, a malformed handshake got the HTTP server's own plain-text 400 or
 * 426, and each was logged as a server error with its stack.
 */
class LogSocketHandshakeIT {

  private static final String KEY = "dGhlIHNhbXBsZSBub25jZQ==";
  private static final Logger ERRORS = Logger.getLogger(HttpErrors.class.getName());

  @TempDir static Path tmp;
  static Stack stack;
  static TestGateway gateway;
  static String logs;
  static final List<String> severe = new CopyOnWriteArrayList<>();
  static final Handler recorder =
      new Handler() {
        @Override
        public void publish(LogRecord record) {
          if (record.getLevel().intValue() >= Level.SEVERE.intValue()) {
            severe.add(record.getMessage());
          }
        }

        @Override
        public void flush() {}

        @Override
        public void close() {}
      };

  @BeforeAll
  static void start() throws Exception {
    stack = Stack.builder(tmp).nats().gateway(new JsonObject()).start();
    gateway = stack.gateway(TestGateway.class);
    stack.createRepo("demo", "work");
    var created =
        gateway.api(
            "POST",
            "/api/v1/repos/demo/agent-jobs",
            gateway.ownerToken,
            "{\"task\":\"wait\",\"exec\":\"true\"}");
    assertEquals(201, created.statusCode(), created.body());
    logs =
        "/api/v1/repos/demo/agent-jobs/" + new JsonObject(created.body()).getString("id") + "/logs";
    ERRORS.addHandler(recorder);
  }

  @AfterAll
  static void stop() throws Exception {
    ERRORS.removeHandler(recorder);
    stack.close();
  }

  @Test
  void aPlainGetIsABadRequest() throws Exception {
    var r = gateway.api("GET", logs, gateway.ownerToken, null);
    assertEquals(400, r.statusCode(), r.body());
    assertTrue(new JsonObject(r.body()).getString("error").contains("websocket"), r.body());
    assertEquals(List.of(), severe);
  }

  @Test
  void malformedHandshakesAreClientErrorsInJson() throws Exception {
    assertRefused(
        400,
        "Upgrade: websocket",
        "Connection: keep-alive",
        "Sec-WebSocket-Key: " + KEY,
        "Sec-WebSocket-Version: 13");
    assertRefused(400, "Upgrade: websocket", "Connection: Upgrade", "Sec-WebSocket-Version: 13");
    String answer =
        assertRefused(
            426,
            "Upgrade: websocket",
            "Connection: Upgrade",
            "Sec-WebSocket-Key: " + KEY,
            "Sec-WebSocket-Version: 8");
    assertTrue(answer.contains("\r\nsec-websocket-version: 13\r\n"), answer);
    assertEquals(List.of(), severe);
  }

  @Test
  void aWellFormedHandshakeIsStillUpgraded() throws Exception {
    String answer =
        exchange(
            "Upgrade: websocket",
            "Connection: Upgrade",
            "Sec-WebSocket-Key: " + KEY,
            "Sec-WebSocket-Version: 13");
    assertTrue(answer.startsWith("HTTP/1.1 101 "), answer);
  }

  /**
   * Sends the handshake and asserts a JSON error with {@code status}; returns the answer's head,
   * lower case.
   */
  private static String assertRefused(int status, String... headers) throws Exception {
    String answer = exchange(headers);
    assertTrue(answer.startsWith("HTTP/1.1 " + status + " "), answer);
    assertTrue(answer.toLowerCase().contains("\r\ncontent-type: application/json\r\n"), answer);
    String body = answer.substring(answer.indexOf("\r\n\r\n") + 4);
    assertTrue(new JsonObject(body).getString("error") != null, body);
    return answer.toLowerCase();
  }

  /**
   * A GET of the log endpoint with {@code headers}, over a raw socket (an HTTP client will not send
   * handshake headers of its own choosing); returns the answer's head and, for a refusal, its body.
   */
  private static String exchange(String... headers) throws Exception {
    URI base = URI.create(gateway.baseUrl);
    try (Socket socket = new Socket(base.getHost(), base.getPort())) {
      socket.setSoTimeout(30_000);
      StringBuilder request =
          new StringBuilder(
              "GET "
                  + logs
                  + " HTTP/1.1\r\nHost: "
                  + base.getAuthority()
                  + "\r\nAuthorization: Bearer "
                  + gateway.ownerToken
                  + "\r\n");
      for (String header : headers) {
        request.append(header).append("\r\n");
      }
      OutputStream out = socket.getOutputStream();
      out.write(request.append("\r\n").toString().getBytes(StandardCharsets.US_ASCII));
      out.flush();
      BufferedReader in =
          new BufferedReader(
              new InputStreamReader(socket.getInputStream(), StandardCharsets.UTF_8));
      StringBuilder answer = new StringBuilder();
      int length = 0;
      for (String line = in.readLine(); line != null && !line.isEmpty(); line = in.readLine()) {
        answer.append(line).append("\r\n");
        if (line.toLowerCase().startsWith("content-length:")) {
          length = Integer.parseInt(line.substring(15).strip());
        }
      }
      answer.append("\r\n");
      char[] body = new char[length];
      int read = 0;
      while (read < length) {
        int n = in.read(body, read, length - read);
        if (n < 0) {
          break;
        }
        read += n;
      }
      return answer.append(body, 0, read).toString();
    }
  }
}
