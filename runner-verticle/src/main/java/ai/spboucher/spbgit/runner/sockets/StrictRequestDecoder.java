package ai.spboucher.spbgit.runner.sockets;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.socket.ChannelInputShutdownEvent;
import io.netty.handler.codec.DecoderResult;
import io.netty.handler.codec.http.HttpMessage;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.LastHttpContent;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.http.impl.VertxHttpRequestDecoder;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * Vert.x's request decoder, held to the strict grammar of RFC 9112 where Netty is lenient, because
 * two parties reading one request differently is how a request is smuggled past a check. Before
 * Netty parses the first request head of the connection it must be: {@code method SP target SP
 * HTTP/1.x CRLF} (one space each, a token method, a visible-ASCII target), then {@code name ":"
 * value CRLF} lines (a token name, no control character but HTAB in the value, no folded
 * continuation line), then CRLF; no bare CR or LF, no empty lines before it. A request declaring
 * both {@code Transfer-Encoding} and {@code Content-Length} is refused too, where Netty would drop
 * the length. A refused head reaches the server's invalid-request handler, which answers 400. Only
 * the first head is checked on a socket that closes the connection after its first answer; on one
 * that keeps connections alive, every head is, each once the request before it was decoded.
 *
 * <p>What follows a {@code CONNECT} head (a TLS ClientHello sent right behind it, say) is tunnel
 * data, not HTTP: it is kept back for {@link #takeTunnelData()} instead of being decoded, because
 * Vert.x drops what its decoder still holds when it turns the connection into a tunnel.
 *
 * <p>It extends Vert.x's internal {@code VertxHttpRequestDecoder}, the only way to take that
 * decoder's place in the pipeline (see {@link ai.spboucher.spbgit.runner.vertx.NettyChannels},
 * which puts it there and lists the internals the runner uses).
 *
 * <p>Threading: a Netty handler, used by one connection's event loop only.
 */
public final class StrictRequestDecoder extends VertxHttpRequestDecoder {

  private static final String TCHAR = "!#$%&'*+-.^_`|~";

  private final int maxHeadBytes;
  private final boolean everyHead;
  private boolean headChecked;
  private boolean requestDecoded;
  private boolean refused;
  private boolean tunnel;
  private ByteBuf tunnelData;

  StrictRequestDecoder(HttpServerOptions options, boolean everyHead) {
    super(options);
    this.maxHeadBytes = options.getMaxHeaderSize();
    this.everyHead = everyHead;
  }

  @Override
  protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) throws Exception {
    if (refused) {
      in.skipBytes(in.readableBytes());
      return;
    }
    if (tunnel) {
      if (tunnelData == null) {
        tunnelData = ctx.alloc().buffer(in.readableBytes());
      }
      tunnelData.writeBytes(in);
      return;
    }
    if (!headChecked) {
      int end = endOfHead(in);
      if (end < 0 && in.readableBytes() <= maxHeadBytes) {
        return;
      }
      headChecked = true;
      String problem =
          end < 0
              ? null
              : problem(
                  in.toString(
                      in.readerIndex(), end - in.readerIndex() - 4, StandardCharsets.ISO_8859_1));
      if (problem != null) {
        refused = true;
        in.skipBytes(in.readableBytes());
        HttpMessage invalid = createInvalidMessage();
        invalid.setDecoderResult(DecoderResult.failure(new IllegalArgumentException(problem)));
        out.add(invalid);
        return;
      }
      int before = out.size();
      super.decode(ctx, in, out);
      tunnel = isConnect(out);
      if (everyHead && !tunnel && endsRequest(out, before)) {
        headChecked = false;
        requestDecoded = true;
      }
      return;
    }
    int before = out.size();
    super.decode(ctx, in, out);
    if (everyHead && endsRequest(out, before)) {
      // Netty decodes one message part per call: the next call starts at the next head.
      headChecked = false;
      requestDecoded = true;
    }
  }

  private static boolean endsRequest(List<Object> decoded, int from) {
    for (int i = from; i < decoded.size(); i++) {
      if (decoded.get(i) instanceof LastHttpContent) {
        return true;
      }
    }
    return false;
  }

  /**
   * The bytes that came behind a {@code CONNECT} head, now the tunnel's; the caller releases them.
   */
  public ByteBuf takeTunnelData() {
    ByteBuf data = tunnelData == null ? Unpooled.EMPTY_BUFFER : tunnelData;
    tunnelData = null;
    return data;
  }

  private static boolean isConnect(List<Object> decoded) {
    return decoded.stream()
        .anyMatch(
            message ->
                message instanceof HttpRequest request
                    && request.method().equals(HttpMethod.CONNECT));
  }

  /**
   * A job that half-closes its connection after a complete request head still gets its answer; one
   * that leaves before the head is complete is let go at once instead of holding its connection
   * until the head timeout.
   */
  @Override
  public void userEventTriggered(ChannelHandlerContext ctx, Object event) throws Exception {
    if (event instanceof ChannelInputShutdownEvent && !headChecked && !requestDecoded) {
      ctx.close();
      return;
    }
    super.userEventTriggered(ctx, event);
  }

  @Override
  protected void handleTransferEncodingChunkedWithContentLength(HttpMessage message) {
    throw new IllegalArgumentException("both Transfer-Encoding and Content-Length");
  }

  /** The index just after the CRLF CRLF ending the head, or -1 while it has not all arrived. */
  private static int endOfHead(ByteBuf in) {
    for (int i = in.readerIndex(); i + 3 < in.writerIndex(); i++) {
      if (in.getByte(i) == '\r'
          && in.getByte(i + 1) == '\n'
          && in.getByte(i + 2) == '\r'
          && in.getByte(i + 3) == '\n') {
        return i + 4;
      }
    }
    return -1;
  }

  /** What is wrong with {@code head} (without its final CRLF CRLF), or null when nothing is. */
  static String problem(String head) {
    String[] lines = head.split("\r\n", -1);
    String[] requestLine = lines[0].split(" ", -1);
    if (requestLine.length != 3
        || !isToken(requestLine[0])
        || requestLine[1].isEmpty()
        || !requestLine[1].chars().allMatch(c -> c > 0x20 && c < 0x7f)
        || !(requestLine[2].equals("HTTP/1.1") || requestLine[2].equals("HTTP/1.0"))) {
      return "malformed request line";
    }
    for (int i = 1; i < lines.length; i++) {
      String line = lines[i];
      if (line.indexOf('\r') >= 0 || line.indexOf('\n') >= 0) {
        return "bare CR or LF in the request head";
      }
      int colon = line.indexOf(':');
      if (colon <= 0 || !isToken(line.substring(0, colon))) {
        return "malformed header line";
      }
      if (line.substring(colon + 1).chars().anyMatch(c -> c < 0x20 && c != '\t' || c == 0x7f)) {
        return "control character in a header value";
      }
    }
    return null;
  }

  private static boolean isToken(String s) {
    return !s.isEmpty()
        && s.chars()
            .allMatch(c -> c < 0x7f && (Character.isLetterOrDigit(c) || TCHAR.indexOf(c) >= 0));
  }
}
