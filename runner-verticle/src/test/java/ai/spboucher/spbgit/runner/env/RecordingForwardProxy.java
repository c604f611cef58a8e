package ai.spboucher.spbgit.runner.env;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A plain forward HTTP proxy that records each request line it is sent and forwards it:
 * absolute-URI requests are re-sent to the origin in origin form, {@code CONNECT} is tunnelled. It
 * exists to see what pip and npm actually send to a proxy, which is what the runner's egress proxy
 * must accept. Loopback or this machine's own addresses only.
 *
 * <p>Threading: one daemon thread accepts, one serves each client connection (two for a tunnel);
 * {@link #requests} may be read from any thread.
 */
final class RecordingForwardProxy implements AutoCloseable {

  /**
   * One request as the proxy received it: {@code target} is the request line's second word,
   * verbatim; {@code headers} the header lines as sent.
   */
  record ProxiedRequest(String method, String target, List<String> headers, InetAddress client) {}

  private final ServerSocket server = new ServerSocket();
  private final List<ProxiedRequest> requests = new CopyOnWriteArrayList<>();

  RecordingForwardProxy(InetAddress address) throws IOException {
    server.bind(new InetSocketAddress(address, 0));
    daemon("forward-proxy-" + port(), this::acceptLoop);
  }

  /** {@code http://<address>:<port>}, as {@code HTTP_PROXY} and {@code --proxy} take it. */
  String url() {
    return "http://" + server.getInetAddress().getHostAddress() + ":" + port();
  }

  int port() {
    return server.getLocalPort();
  }

  List<ProxiedRequest> requests() {
    return List.copyOf(requests);
  }

  private void acceptLoop() {
    while (!server.isClosed()) {
      try {
        Socket client = server.accept();
        daemon("forward-proxy-client", () -> serve(client));
      } catch (IOException e) {
        return;
      }
    }
  }

  private void serve(Socket client) {
    try (client) {
      InputStream in = client.getInputStream();
      OutputStream out = client.getOutputStream();
      // Clients keep connections alive: serve requests until the client closes or a reply must end
      // with EOF.
      while (true) {
        List<String> head = readHead(in);
        if (head.isEmpty()) {
          return;
        }
        String[] line = head.get(0).split(" ");
        if (line.length != 3) {
          out.write(
              "HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"
                  .getBytes());
          return;
        }
        requests.add(
            new ProxiedRequest(
                line[0],
                line[1],
                List.copyOf(head.subList(1, head.size())),
                client.getInetAddress()));
        if (line[0].equals("CONNECT")) {
          tunnel(line[1], in, out);
          return;
        }
        if (!forward(line[0], URI.create(line[1]), head, in, out)) {
          return;
        }
      }
    } catch (IOException | IllegalArgumentException e) {
      // the client or origin went away, or sent something this small proxy does not speak: drop the
      // connection
    }
  }

  /**
   * Forwards one absolute-URI request; false when the reply was delimited by closing the
   * connection.
   */
  private boolean forward(
      String method, URI target, List<String> head, InputStream in, OutputStream out)
      throws IOException {
    if (!"http".equals(target.getScheme())) {
      out.write(
          "HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Length: 0\r\n\r\n".getBytes());
      return false;
    }
    String length = header(head, "content-length");
    byte[] body = length == null ? new byte[0] : in.readNBytes(Integer.parseInt(length.trim()));
    try (Socket origin =
        new Socket(target.getHost(), target.getPort() < 0 ? 80 : target.getPort())) {
      StringBuilder request =
          new StringBuilder(method)
              .append(' ')
              .append(target.getRawPath())
              .append(target.getRawQuery() == null ? "" : "?" + target.getRawQuery())
              .append(" HTTP/1.1\r\n");
      head.stream()
          .skip(1)
          .filter(h -> !hopByHop(h))
          .forEach(h -> request.append(h).append("\r\n"));
      request.append("Connection: close\r\n\r\n");
      OutputStream toOrigin = origin.getOutputStream();
      toOrigin.write(request.toString().getBytes(StandardCharsets.ISO_8859_1));
      toOrigin.write(body);
      toOrigin.flush();
      InputStream fromOrigin = origin.getInputStream();
      List<String> replyHead = readHead(fromOrigin);
      byte[] replyBody = fromOrigin.readAllBytes();
      boolean delimited =
          header(replyHead, "content-length") != null
              || "chunked"
                  .equalsIgnoreCase(String.valueOf(header(replyHead, "transfer-encoding")).trim());
      StringBuilder reply = new StringBuilder();
      replyHead.stream().filter(h -> !hopByHop(h)).forEach(h -> reply.append(h).append("\r\n"));
      reply.append(delimited ? "" : "Connection: close\r\n").append("\r\n");
      out.write(reply.toString().getBytes(StandardCharsets.ISO_8859_1));
      out.write(replyBody);
      out.flush();
      return delimited;
    }
  }

  private void tunnel(String authority, InputStream in, OutputStream out) throws IOException {
    URI hostPort = URI.create("tunnel://" + authority);
    try (Socket origin = new Socket(hostPort.getHost(), hostPort.getPort())) {
      out.write(
          "HTTP/1.1 200 Connection Established\r\n\r\n".getBytes(StandardCharsets.ISO_8859_1));
      out.flush();
      Thread up =
          daemon(
              "forward-proxy-tunnel",
              () -> {
                try {
                  in.transferTo(origin.getOutputStream());
                  origin.shutdownOutput();
                } catch (IOException e) {
                  // one side closed: the other copy ends too
                }
              });
      origin.getInputStream().transferTo(out);
      up.interrupt();
    }
  }

  private static boolean hopByHop(String header) {
    String name =
        header.substring(0, Math.max(0, header.indexOf(':'))).trim().toLowerCase(Locale.ROOT);
    return name.equals("connection")
        || name.equals("keep-alive")
        || name.equals("proxy-connection")
        || name.equals("proxy-authorization");
  }

  private static String header(List<String> head, String name) {
    return head.stream()
        .skip(1)
        .filter(h -> h.toLowerCase(Locale.ROOT).startsWith(name + ":"))
        .map(h -> h.substring(h.indexOf(':') + 1).trim())
        .findFirst()
        .orElse(null);
  }

  /** The request or status line and the header lines, without CRLFs; empty at end of stream. */
  private static List<String> readHead(InputStream in) throws IOException {
    List<String> lines = new ArrayList<>();
    ByteArrayOutputStream line = new ByteArrayOutputStream();
    int b;
    while ((b = in.read()) >= 0) {
      if (b == '\n') {
        String s = line.toString(StandardCharsets.ISO_8859_1).replaceAll("\r$", "");
        line.reset();
        if (s.isEmpty()) {
          return lines;
        }
        lines.add(s);
      } else {
        line.write(b);
      }
    }
    return List.of();
  }

  private static Thread daemon(String name, Runnable task) {
    Thread t = new Thread(task, name);
    t.setDaemon(true);
    t.start();
    return t;
  }

  @Override
  public void close() throws IOException {
    server.close();
  }
}
