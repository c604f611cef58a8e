package ai.spboucher.spbgit.runner.model;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * Speaks raw HTTP/1.1 to a model endpoint's unix socket, as the agent's relay would: writes the
 * request (on a thread of its own, so an answer given before the whole body was read is still seen)
 * and reads the answer until the endpoint closes the connection.
 */
final class EndpointClient {

  record Response(int status, Map<String, String> headers, byte[] body, boolean sawContinue) {

    String text() {
      return new String(body, StandardCharsets.UTF_8);
    }

    JsonNode json() throws IOException {
      return FakeProvider.JSON.readTree(body);
    }

    String errorType() throws IOException {
      return json().path("error").path("type").asText();
    }
  }

  private EndpointClient() {}

  static Response post(Path socket, String path, String json) throws Exception {
    return post(socket, path, json, Map.of());
  }

  static Response post(Path socket, String path, String json, Map<String, String> headers)
      throws Exception {
    byte[] body = json.getBytes(StandardCharsets.UTF_8);
    StringBuilder head =
        new StringBuilder(
            "POST "
                + path
                + " HTTP/1.1\r\nhost: 127.0.0.1:3129\r\n"
                + "content-type: application/json\r\ncontent-length: "
                + body.length
                + "\r\n");
    headers.forEach((name, value) -> head.append(name).append(": ").append(value).append("\r\n"));
    head.append("\r\n");
    return exchange(socket, concat(head.toString().getBytes(StandardCharsets.ISO_8859_1), body));
  }

  static Response exchange(Path socket, byte[] request) throws Exception {
    try (SocketChannel channel = SocketChannel.open(StandardProtocolFamily.UNIX)) {
      channel.connect(UnixDomainSocketAddress.of(socket));
      Thread writer =
          new Thread(
              () -> {
                try {
                  ByteBuffer buffer = ByteBuffer.wrap(request);
                  while (buffer.hasRemaining()) {
                    channel.write(buffer);
                  }
                } catch (IOException e) {
                  // The endpoint answered early and closed: the reader sees its answer.
                }
              });
      writer.setDaemon(true);
      writer.start();
      ByteArrayOutputStream all = new ByteArrayOutputStream();
      ByteBuffer buffer = ByteBuffer.allocate(64 << 10);
      try {
        while (channel.read(buffer.clear()) >= 0) {
          all.write(buffer.array(), 0, buffer.position());
        }
      } catch (IOException e) {
        // A 503 for one connection too many is written without waiting for the request: the request
        // then
        // arrives at a closed socket, which resets the connection after the answer.
        if (all.size() == 0) {
          throw e;
        }
      }
      return parse(all.toByteArray());
    }
  }

  static byte[] concat(byte[] a, byte[] b) {
    byte[] both = Arrays.copyOf(a, a.length + b.length);
    System.arraycopy(b, 0, both, a.length, b.length);
    return both;
  }

  private static Response parse(byte[] raw) {
    String text = new String(raw, StandardCharsets.ISO_8859_1);
    boolean sawContinue = false;
    if (text.startsWith("HTTP/1.1 100 ")) {
      sawContinue = true;
      int end = text.indexOf("\r\n\r\n") + 4;
      text = text.substring(end);
      raw = Arrays.copyOfRange(raw, end, raw.length);
    }
    int headEnd = text.indexOf("\r\n\r\n");
    if (headEnd < 0) {
      throw new IllegalStateException("no complete response: " + text);
    }
    String[] lines = text.substring(0, headEnd).split("\r\n");
    Map<String, String> headers = new LinkedHashMap<>();
    for (int i = 1; i < lines.length; i++) {
      int colon = lines[i].indexOf(':');
      headers.put(
          lines[i].substring(0, colon).toLowerCase(Locale.ROOT),
          lines[i].substring(colon + 1).strip());
    }
    byte[] body = Arrays.copyOfRange(raw, headEnd + 4, raw.length);
    if (headers.containsKey("content-length")) {
      if (Integer.parseInt(headers.get("content-length")) != body.length) {
        throw new IllegalStateException(
            "content-length " + headers.get("content-length") + " but " + body.length + " bytes");
      }
    }
    return new Response(Integer.parseInt(lines[0].split(" ")[1]), headers, body, sawContinue);
  }
}
