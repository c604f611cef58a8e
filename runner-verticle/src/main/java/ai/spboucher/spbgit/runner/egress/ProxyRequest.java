package ai.spboucher.spbgit.runner.egress;

import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.Set;

/**
 * A job's request to the proxy, parsed strictly from its head: either {@code CONNECT host:port} or a plain
 * HTTP request in absolute form ({@code GET http://host[:port]/path}). For the latter it also holds the head
 * to send upstream: origin-form request line, {@code Host} taken from the URI (RFC 9112 section 3.2.2), the
 * job's other headers unchanged except the proxy and hop-by-hop ones, and {@code Connection: close} so that
 * the next request comes back through the proxy on a new connection and is checked again.
 */
final class ProxyRequest {

  private static final Set<String> NOT_FORWARDED =
      Set.of("host", "proxy-connection", "proxy-authorization", "connection", "keep-alive");
  private static final String TCHAR = "!#$%&'*+-.^_`|~";

  private final String method;
  private final HostPort target;
  private final byte[] upstreamHead;

  private ProxyRequest(String method, HostPort target, byte[] upstreamHead) {
    this.method = method;
    this.target = target;
    this.upstreamHead = upstreamHead;
  }

  String method() {
    return method;
  }

  HostPort target() {
    return target;
  }

  boolean isConnect() {
    return upstreamHead == null;
  }

  /** The rewritten head for a plain HTTP request; {@code null} for CONNECT. */
  byte[] upstreamHead() {
    return upstreamHead;
  }

  /** Parses {@code buf[0, headLength)}, which ends with the blank line ending the head. */
  static ProxyRequest parse(byte[] buf, int headLength) throws RejectedRequest {
    String[] lines = new String(buf, 0, headLength - 4, StandardCharsets.ISO_8859_1).split("\r\n", -1);
    String[] requestLine = lines[0].split(" ", -1);
    if (requestLine.length != 3 || !isToken(requestLine[0]) || requestLine[1].isEmpty()
        || !requestLine[1].chars().allMatch(c -> c > 0x20 && c < 0x7f)
        || !(requestLine[2].equals("HTTP/1.1") || requestLine[2].equals("HTTP/1.0"))) {
      throw new RejectedRequest(400, "malformed request line");
    }
    for (int i = 1; i < lines.length; i++) {
      checkHeaderLine(lines[i]);
    }
    String method = requestLine[0];
    if (method.equals("CONNECT")) {
      return new ProxyRequest(method, authority(requestLine[1], -1), null);
    }
    return absoluteForm(method, requestLine[1], requestLine[2], lines);
  }

  private static ProxyRequest absoluteForm(String method, String uri, String version, String[] lines)
      throws RejectedRequest {
    if (uri.startsWith("/") || uri.equals("*")) {
      throw new RejectedRequest(400, "this is a proxy: send the absolute URI (http://host:port/path)");
    }
    if (!uri.regionMatches(true, 0, "http://", 0, 7)) {
      throw new RejectedRequest(400, "only http:// URIs are proxied; use CONNECT for anything else");
    }
    if (uri.indexOf('#') >= 0) {
      throw new RejectedRequest(400, "a request target has no fragment");
    }
    String rest = uri.substring(7);
    int end = 0;
    while (end < rest.length() && rest.charAt(end) != '/' && rest.charAt(end) != '?') {
      end++;
    }
    String authority = rest.substring(0, end);
    if (authority.indexOf('@') >= 0) {
      throw new RejectedRequest(400, "user info in the request target is not accepted");
    }
    HostPort target = authority(authority, 80);
    String path = rest.substring(end);
    path = path.isEmpty() ? "/" : path.startsWith("?") ? "/" + path : path;

    StringBuilder head = new StringBuilder(method).append(' ').append(path).append(' ').append(version)
        .append("\r\nHost: ").append(authority).append("\r\n");
    for (int i = 1; i < lines.length; i++) {
      String name = lines[i].substring(0, lines[i].indexOf(':')).toLowerCase(Locale.ROOT);
      if (!NOT_FORWARDED.contains(name)) {
        head.append(lines[i]).append("\r\n");
      }
    }
    head.append("Connection: close\r\n\r\n");
    return new ProxyRequest(method, target, head.toString().getBytes(StandardCharsets.ISO_8859_1));
  }

  private static HostPort authority(String text, int defaultPort) throws RejectedRequest {
    try {
      return HostPort.parse(text, defaultPort);
    } catch (IllegalArgumentException e) {
      throw new RejectedRequest(400, "bad target host:port: " + e.getMessage());
    }
  }

  private static void checkHeaderLine(String line) throws RejectedRequest {
    if (line.indexOf('\r') >= 0 || line.indexOf('\n') >= 0) {
      throw new RejectedRequest(400, "bare CR or LF in the request head");
    }
    int colon = line.indexOf(':');
    if (colon <= 0 || !isToken(line.substring(0, colon))) {
      throw new RejectedRequest(400, "malformed header line");
    }
    for (int i = colon + 1; i < line.length(); i++) {
      char c = line.charAt(i);
      if ((c < 0x20 && c != '\t') || c == 0x7f) {
        throw new RejectedRequest(400, "control character in a header value");
      }
    }
  }

  private static boolean isToken(String s) {
    return !s.isEmpty() && s.chars().allMatch(c -> c < 0x7f
        && (Character.isLetterOrDigit(c) || TCHAR.indexOf(c) >= 0));
  }
}
