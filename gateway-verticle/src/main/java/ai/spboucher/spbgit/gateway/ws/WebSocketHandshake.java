package ai.spboucher.spbgit.gateway.ws;

import java.util.List;
import java.util.Optional;
import java.util.function.Function;

/**
 * Whether a request is a websocket opening handshake the HTTP server accepts (RFC 6455, section
 * 4.2.1), checked before the server is asked to upgrade it: the server refuses a malformed
 * handshake itself, in plain text, and reports it to the route as a failure, which would be logged
 * as a server fault. Checked first, it is answered like every other API client error, in JSON.
 */
final class WebSocketHandshake {

  /** The only protocol version browsers and this server speak. */
  static final String VERSION = "13";

  /** Why a request cannot be upgraded, and the status to answer it with. */
  record Refusal(int status, String message) {}

  private WebSocketHandshake() {}

  /**
   * The refusal for a request whose headers {@code headers} returns (every value of a header, by
   * name), or empty when it is a handshake the server accepts.
   */
  static Optional<Refusal> refusalOf(Function<String, List<String>> headers) {
    if (!hasToken(headers.apply("Upgrade"), "websocket")) {
      return Optional.of(
          new Refusal(
              400,
              "this endpoint is a websocket: open it with a websocket handshake "
                  + "(Upgrade: websocket)"));
    }
    if (!hasToken(headers.apply("Connection"), "upgrade")) {
      return Optional.of(
          new Refusal(400, "a websocket handshake needs the header Connection: Upgrade"));
    }
    if (headers.apply("Sec-WebSocket-Key").stream().allMatch(String::isBlank)) {
      return Optional.of(
          new Refusal(400, "a websocket handshake needs a Sec-WebSocket-Key header"));
    }
    if (!headers.apply("Sec-WebSocket-Version").stream()
        .map(String::strip)
        .toList()
        .equals(List.of(VERSION))) {
      return Optional.of(new Refusal(426, "only websocket version " + VERSION + " is supported"));
    }
    return Optional.empty();
  }

  /** Whether one of the comma-separated values of a header is {@code token}, ignoring case. */
  private static boolean hasToken(List<String> values, String token) {
    for (String value : values) {
      for (String part : value.split(",")) {
        if (part.strip().equalsIgnoreCase(token)) {
          return true;
        }
      }
    }
    return false;
  }
}
