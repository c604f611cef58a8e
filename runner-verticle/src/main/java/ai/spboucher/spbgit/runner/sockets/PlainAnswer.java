package ai.spboucher.spbgit.runner.sockets;

import java.nio.charset.StandardCharsets;

/**
 * An answer the runner's egress proxy or git relay gives a job itself: a status line, a one-line plain-text body
 * (what curl and git show the job), and {@code Connection: close}.
 */
public final class PlainAnswer {

  private PlainAnswer() {
  }

  /** The complete response bytes. */
  public static byte[] of(int status, String message) {
    byte[] body = (message + "\n").getBytes(StandardCharsets.UTF_8);
    String head = "HTTP/1.1 " + status + " " + reason(status) + "\r\n"
        + "Content-Type: text/plain; charset=utf-8\r\n"
        + "Content-Length: " + body.length + "\r\n"
        + "Connection: close\r\n\r\n";
    byte[] headBytes = head.getBytes(StandardCharsets.US_ASCII);
    byte[] all = new byte[headBytes.length + body.length];
    System.arraycopy(headBytes, 0, all, 0, headBytes.length);
    System.arraycopy(body, 0, all, headBytes.length, body.length);
    return all;
  }

  private static String reason(int status) {
    return switch (status) {
      case 400 -> "Bad Request";
      case 403 -> "Forbidden";
      case 408 -> "Request Timeout";
      case 431 -> "Request Header Fields Too Large";
      case 502 -> "Bad Gateway";
      case 503 -> "Service Unavailable";
      case 504 -> "Gateway Timeout";
      default -> "Internal Server Error";
    };
  }
}
