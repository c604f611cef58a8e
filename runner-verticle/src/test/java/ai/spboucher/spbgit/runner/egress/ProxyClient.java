package ai.spboucher.spbgit.runner.egress;

import java.io.IOException;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Locale;

/**
 * A job's side of the proxy socket, as the container's socat would use it: raw bytes over the unix
 * socket.
 */
final class ProxyClient implements AutoCloseable {

  /** A response as the client saw it: status code, head text, body (by Content-Length). */
  record Response(int status, String head, String body) {}

  private final SocketChannel channel;
  private byte[] pending = new byte[0];

  private ProxyClient(SocketChannel channel) {
    this.channel = channel;
  }

  static ProxyClient connect(Path socket) throws IOException {
    return new ProxyClient(SocketChannel.open(UnixDomainSocketAddress.of(socket)));
  }

  ProxyClient send(String text) throws IOException {
    return send(text.getBytes(StandardCharsets.ISO_8859_1));
  }

  ProxyClient send(byte[] bytes) throws IOException {
    ByteBuffer buf = ByteBuffer.wrap(bytes);
    while (buf.hasRemaining()) {
      channel.write(buf);
    }
    return this;
  }

  void shutdownOutput() throws IOException {
    channel.shutdownOutput();
  }

  /** Reads a response head and its Content-Length body. */
  Response readResponse() throws IOException {
    String head;
    int end;
    while ((end = indexOf(pending, "\r\n\r\n")) < 0) {
      if (!fill()) {
        throw new IOException("end of stream inside a response head: " + text(pending));
      }
    }
    head = new String(pending, 0, end + 4, StandardCharsets.ISO_8859_1);
    pending = Arrays.copyOfRange(pending, end + 4, pending.length);
    int status = Integer.parseInt(head.substring(9, 12));
    int length = 0;
    for (String line : head.split("\r\n")) {
      if (line.toLowerCase(Locale.ROOT).startsWith("content-length:")) {
        length = Integer.parseInt(line.substring(15).trim());
      }
    }
    return new Response(status, head, new String(readExactly(length), StandardCharsets.UTF_8));
  }

  byte[] readExactly(int n) throws IOException {
    while (pending.length < n) {
      if (!fill()) {
        throw new IOException("end of stream after " + pending.length + " of " + n + " bytes");
      }
    }
    byte[] out = Arrays.copyOf(pending, n);
    pending = Arrays.copyOfRange(pending, n, pending.length);
    return out;
  }

  /**
   * True once the proxy has closed its side (end of stream or reset), after any data still pending.
   */
  boolean readsEndOfStream() {
    try {
      while (fill()) {
        pending = new byte[0];
      }
      return true;
    } catch (IOException e) {
      return true;
    }
  }

  private boolean fill() throws IOException {
    ByteBuffer buf = ByteBuffer.allocate(64 * 1024);
    int n = channel.read(buf);
    if (n < 0) {
      return false;
    }
    byte[] grown = Arrays.copyOf(pending, pending.length + n);
    System.arraycopy(buf.array(), 0, grown, pending.length, n);
    pending = grown;
    return true;
  }

  @Override
  public void close() throws IOException {
    channel.close();
  }

  static int indexOf(byte[] data, String needle) {
    byte[] n = needle.getBytes(StandardCharsets.ISO_8859_1);
    outer:
    for (int i = 0; i + n.length <= data.length; i++) {
      for (int j = 0; j < n.length; j++) {
        if (data[i + j] != n[j]) {
          continue outer;
        }
      }
      return i;
    }
    return -1;
  }

  private static String text(byte[] bytes) {
    return new String(bytes, StandardCharsets.ISO_8859_1);
  }
}
