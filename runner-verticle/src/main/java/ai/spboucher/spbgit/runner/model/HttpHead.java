package ai.spboucher.spbgit.runner.model;

import ai.spboucher.spbgit.runner.sockets.Refusal;

import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * A parsed HTTP/1.x request head, strictly: anything ambiguous about the body's length is refused.
 *
 * @param path the request target up to its {@code ?}
 * @param query what follows the {@code ?}, or null when there is none
 * @param headers by lower-case name; repeated headers joined with {@code ", "}
 */
public record HttpHead(String method, String path, String query, Map<String, String> headers) {

  private static final Pattern TOKEN = Pattern.compile("[!#$%&'*+.^_`|~0-9A-Za-z-]+");
  private static final Pattern REQUEST_LINE = Pattern.compile("([A-Z]+) (/[!-~]*) HTTP/1\\.[01]");

  /** Parses the head (without the blank line ending it); throws a 400 refusal when it is malformed. */
  public static HttpHead parse(byte[] head) throws Refusal {
    String text = new String(head, StandardCharsets.ISO_8859_1);
    String[] lines = text.split("\r\n", -1);
    var line = REQUEST_LINE.matcher(lines[0]);
    if (!line.matches()) {
      throw Refusal.badRequest("malformed request line");
    }
    Map<String, String> headers = new LinkedHashMap<>();
    for (int i = 1; i < lines.length; i++) {
      int colon = lines[i].indexOf(':');
      if (colon <= 0 || !TOKEN.matcher(lines[i].substring(0, colon)).matches()) {
        throw Refusal.badRequest("malformed header line");
      }
      String name = lines[i].substring(0, colon).toLowerCase(Locale.ROOT);
      String value = lines[i].substring(colon + 1).strip();
      if (value.chars().anyMatch(c -> c < 0x20 && c != '\t' || c == 0x7f)) {
        throw Refusal.badRequest("control character in header " + name);
      }
      String previous = headers.putIfAbsent(name, value);
      if (previous != null) {
        if (name.equals("content-length") || name.equals("transfer-encoding")) {
          throw Refusal.badRequest("repeated " + name);
        }
        headers.put(name, previous + ", " + value);
      }
    }
    String target = line.group(2);
    int query = target.indexOf('?');
    return new HttpHead(line.group(1), query < 0 ? target : target.substring(0, query),
        query < 0 ? null : target.substring(query + 1), Map.copyOf(headers));
  }

  public String header(String name) {
    return headers.get(name);
  }

  public boolean chunked() throws Refusal {
    String encoding = header("transfer-encoding");
    if (encoding == null) {
      return false;
    }
    if (!encoding.equalsIgnoreCase("chunked") || header("content-length") != null) {
      throw Refusal.badRequest("unsupported transfer-encoding");
    }
    return true;
  }

  /** The declared body length; 0 when neither a length nor chunked encoding is given. */
  public long contentLength() throws Refusal {
    String value = header("content-length");
    if (value == null) {
      return 0;
    }
    if (!value.matches("[0-9]{1,18}")) {
      throw Refusal.badRequest("invalid content-length");
    }
    return Long.parseLong(value);
  }

  boolean expectsContinue() {
    return "100-continue".equalsIgnoreCase(header("expect"));
  }
}
