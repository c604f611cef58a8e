package ai.spboucher.spbgit.gateway.ws;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class WebSocketHandshakeTest {

  private static Map<String, List<String>> handshake() {
    Map<String, List<String>> headers = new HashMap<>();
    headers.put("Upgrade", List.of("websocket"));
    headers.put("Connection", List.of("Upgrade"));
    headers.put("Sec-WebSocket-Key", List.of("dGhlIHNhbXBsZSBub25jZQ=="));
    headers.put("Sec-WebSocket-Version", List.of("13"));
    return headers;
  }

  private static Optional<WebSocketHandshake.Refusal> refusalOf(Map<String, List<String>> headers) {
    return WebSocketHandshake.refusalOf(name -> headers.getOrDefault(name, List.of()));
  }

  @Test
  void acceptsWhatBrowsersSend() {
    assertTrue(refusalOf(handshake()).isEmpty());
    Map<String, List<String>> firefox = handshake();
    firefox.put("Connection", List.of("keep-alive, Upgrade"));
    firefox.put("Upgrade", List.of("WebSocket"));
    assertTrue(refusalOf(firefox).isEmpty());
  }

  @Test
  void refusesAPlainRequest() {
    Map<String, List<String>> plain = handshake();
    plain.remove("Upgrade");
    assertEquals(400, refusalOf(plain).orElseThrow().status());
    Map<String, List<String>> otherProtocol = handshake();
    otherProtocol.put("Upgrade", List.of("h2c"));
    assertEquals(400, refusalOf(otherProtocol).orElseThrow().status());
  }

  @Test
  void refusesAHandshakeWithoutConnectionUpgrade() {
    Map<String, List<String>> headers = handshake();
    headers.put("Connection", List.of("keep-alive"));
    assertEquals(400, refusalOf(headers).orElseThrow().status());
    headers.remove("Connection");
    assertEquals(400, refusalOf(headers).orElseThrow().status());
  }

  @Test
  void refusesAHandshakeWithoutAKey() {
    Map<String, List<String>> headers = handshake();
    headers.put("Sec-WebSocket-Key", List.of(" "));
    assertEquals(400, refusalOf(headers).orElseThrow().status());
    headers.remove("Sec-WebSocket-Key");
    assertEquals(400, refusalOf(headers).orElseThrow().status());
  }

  @Test
  void answersAnotherVersionWithUpgradeRequired() {
    for (List<String> version :
        List.of(List.<String>of(), List.of("8"), List.of("99"), List.of("13", "8"))) {
      Map<String, List<String>> headers = handshake();
      headers.put("Sec-WebSocket-Version", version);
      assertEquals(426, refusalOf(headers).orElseThrow().status(), version.toString());
    }
  }
}
