package ai.spboucher.spbgit.runner.model;

import ai.spboucher.spbgit.testsupport.FakeProvider;
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
 * and reads one answer, framed by its content-length or its chunks (the endpoint keeps the
 * connection open), or until the endpoint closes the connection. {@link Connection} sends several
 * requests on one connection and reads a stream as it comes.
 */
final class EndpointClient {

  record Response(
      int status, Map<String, String> headers, byte[] body, boolean sawContinue, boolean closed) {

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
    return exchange(socket, request(path, json, headers));
  }

  static byte[] request(String path, String json, Map<String, String> headers) {
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
    return concat(head.toString().getBytes(StandardCharsets.ISO_8859_1), body);
  }

  static Response exchange(Path socket, byte[] request) throws Exception {
    try (Connection connection = Connection.open(socket)) {
      connection.sendInBackground(request);
      return connection.readResponse();
    }
  }

  /** One connection to the endpoint, for several requests or for reading a stream as it comes. */
  static final class Connection implements AutoCloseable {
    private final SocketChannel channel;
    private final ByteArrayOutputStream received = new ByteArrayOutputStream();
    private int consumed;
    private boolean eof;

    private Connection(SocketChannel channel) {
      this.channel = channel;
    }

    static Connection open(Path socket) throws IOException {
      SocketChannel channel = SocketChannel.open(StandardProtocolFamily.UNIX);
      channel.connect(UnixDomainSocketAddress.of(socket));
      return new Connection(channel);
    }

    void send(byte[] request) throws IOException {
      ByteBuffer buffer = ByteBuffer.wrap(request);
      while (buffer.hasRemaining()) {
        channel.write(buffer);
      }
    }

    void sendInBackground(byte[] request) {
      Thread writer =
          new Thread(
              () -> {
                try {
                  send(request);
                } catch (IOException e) {
                  // The endpoint answered early and closed: the reader sees its answer.
                }
              });
      writer.setDaemon(true);
      writer.start();
    }

    /** Reads until what came so far (after the last response read) contains {@code text}. */
    String readUntil(String text) throws IOException {
      while (true) {
        String seen = new String(unread(), StandardCharsets.UTF_8);
        if (seen.contains(text)) {
          return seen;
        }
        if (!readMore()) {
          throw new IOException("connection closed before " + text + " came; got: " + seen);
        }
      }
    }

    /** Reads the next complete response (after an interim 100 Continue, if any). */
    Response readResponse() throws IOException {
      while (true) {
        Response response = tryParse(eof);
        if (response != null) {
          return response;
        }
        if (!readMore()) {
          Response last = tryParse(true);
          if (last == null) {
            throw new IllegalStateException(
                "no complete response: " + new String(unread(), StandardCharsets.ISO_8859_1));
          }
          return last;
        }
      }
    }

    /** Closes the client's side only: the request is all sent, the answer still to come. */
    void shutdownOutput() throws IOException {
      channel.shutdownOutput();
    }

    /** Whether the endpoint closed the connection: reads once, which blocks while it is open. */
    boolean closedByPeer() {
      try {
        return channel.read(ByteBuffer.allocate(1)) < 0;
      } catch (IOException e) {
        return true;
      }
    }

    private byte[] unread() {
      byte[] all = received.toByteArray();
      return Arrays.copyOfRange(all, consumed, all.length);
    }

    private boolean readMore() throws IOException {
      if (eof) {
        return false;
      }
      ByteBuffer buffer = ByteBuffer.allocate(64 << 10);
      int n;
      try {
        n = channel.read(buffer);
      } catch (IOException e) {
        // A 503 for one connection too many is written without waiting for the request: the
        // request then arrives at a closed socket, which resets the connection after the answer.
        if (received.size() == consumed) {
          throw e;
        }
        n = -1;
      }
      if (n < 0) {
        eof = true;
        return false;
      }
      received.write(buffer.array(), 0, n);
      return true;
    }

    private Response tryParse(boolean atEof) {
      byte[] raw = unread();
      String text = new String(raw, StandardCharsets.ISO_8859_1);
      int skipped = 0;
      boolean sawContinue = false;
      if (text.startsWith("HTTP/1.1 100 ")) {
        int end = text.indexOf("\r\n\r\n");
        if (end < 0) {
          return null;
        }
        sawContinue = true;
        skipped = end + 4;
        text = text.substring(skipped);
      }
      int headEnd = text.indexOf("\r\n\r\n");
      if (headEnd < 0) {
        return null;
      }
      String[] lines = text.substring(0, headEnd).split("\r\n");
      Map<String, String> headers = new LinkedHashMap<>();
      for (int i = 1; i < lines.length; i++) {
        int colon = lines[i].indexOf(':');
        headers.put(
            lines[i].substring(0, colon).toLowerCase(Locale.ROOT),
            lines[i].substring(colon + 1).strip());
      }
      int bodyStart = skipped + headEnd + 4;
      byte[] body;
      int end;
      if (headers.containsKey("content-length")) {
        int length = Integer.parseInt(headers.get("content-length"));
        if (raw.length - bodyStart < length) {
          return null;
        }
        body = Arrays.copyOfRange(raw, bodyStart, bodyStart + length);
        end = bodyStart + length;
      } else if ("chunked".equalsIgnoreCase(headers.get("transfer-encoding"))) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        int at = bodyStart;
        while (true) {
          int lineEnd = indexOf(raw, at);
          if (lineEnd < 0) {
            return null;
          }
          String size = new String(raw, at, lineEnd - at, StandardCharsets.ISO_8859_1);
          int length = Integer.parseInt(size.split(";")[0].trim(), 16);
          at = lineEnd + 2;
          if (length == 0) {
            int trailerEnd = indexOf(raw, at);
            if (trailerEnd < 0) {
              return null;
            }
            at = trailerEnd + 2;
            break;
          }
          if (raw.length < at + length + 2) {
            return null;
          }
          out.write(raw, at, length);
          at += length + 2;
        }
        body = out.toByteArray();
        end = at;
      } else {
        if (!atEof) {
          return null;
        }
        body = Arrays.copyOfRange(raw, bodyStart, raw.length);
        end = raw.length;
      }
      consumed += end;
      return new Response(
          Integer.parseInt(lines[0].split(" ")[1]), headers, body, sawContinue, atEof);
    }

    private static int indexOf(byte[] raw, int from) {
      for (int i = from; i + 1 < raw.length; i++) {
        if (raw[i] == '\r' && raw[i + 1] == '\n') {
          return i;
        }
      }
      return -1;
    }

    @Override
    public void close() throws IOException {
      channel.close();
    }
  }

  static byte[] concat(byte[] a, byte[] b) {
    byte[] both = Arrays.copyOf(a, a.length + b.length);
    System.arraycopy(b, 0, both, a.length, b.length);
    return both;
  }
}
