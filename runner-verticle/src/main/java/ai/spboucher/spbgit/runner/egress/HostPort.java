package ai.spboucher.spbgit.runner.egress;

import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.Locale;

/**
 * A strictly validated {@code host:port}. The host is canonical: a lower-case DNS name, a
 * dotted-quad IPv4 literal, or an IPv6 literal in the JDK's full textual form (kept without
 * brackets). Parsing never touches DNS.
 */
record HostPort(String host, int port) {

  /** Parses {@code host:port} or {@code [v6]:port}; the port is required. */
  static HostPort parse(String authority) {
    return parse(authority, -1);
  }

  /** Parses an authority; when {@code defaultPort > 0} the {@code :port} part may be left out. */
  static HostPort parse(String authority, int defaultPort) {
    if (authority == null || authority.isEmpty()) {
      throw new IllegalArgumentException("empty");
    }
    String hostText;
    String portText;
    if (authority.startsWith("[")) {
      int close = authority.indexOf(']');
      if (close < 0) {
        throw new IllegalArgumentException("unclosed '[' in IPv6 literal");
      }
      hostText = authority.substring(0, close + 1);
      String rest = authority.substring(close + 1);
      if (!rest.isEmpty() && !rest.startsWith(":")) {
        throw new IllegalArgumentException("unexpected text after ']'");
      }
      portText = rest.isEmpty() ? null : rest.substring(1);
    } else {
      int colon = authority.lastIndexOf(':');
      hostText = colon < 0 ? authority : authority.substring(0, colon);
      portText = colon < 0 ? null : authority.substring(colon + 1);
    }
    if (portText == null && defaultPort <= 0) {
      throw new IllegalArgumentException("missing :port");
    }
    int port = portText == null ? defaultPort : parsePort(portText);
    return new HostPort(canonicalHost(hostText), port);
  }

  /** The canonical form of a host as written in an authority (IPv6 in brackets); throws on junk. */
  static String canonicalHost(String text) {
    if (text == null || text.isEmpty()) {
      throw new IllegalArgumentException("empty host");
    }
    if (text.startsWith("[") && text.endsWith("]")) {
      return canonicalIpv6(text.substring(1, text.length() - 1));
    }
    if (text.indexOf(':') >= 0 || text.indexOf('[') >= 0 || text.indexOf(']') >= 0) {
      throw new IllegalArgumentException("IPv6 literals must be written in brackets: [addr]:port");
    }
    return canonicalName(text);
  }

  static int parsePort(String text) {
    if (text.isEmpty() || text.length() > 5 || !text.chars().allMatch(c -> c >= '0' && c <= '9')) {
      throw new IllegalArgumentException("port must be a number from 1 to 65535");
    }
    if (text.charAt(0) == '0') {
      throw new IllegalArgumentException(
          "port must be a number from 1 to 65535 without leading zeros");
    }
    int port = Integer.parseInt(text);
    if (port > 65535) {
      throw new IllegalArgumentException("port must be a number from 1 to 65535");
    }
    return port;
  }

  boolean isIpv6() {
    return host.indexOf(':') >= 0;
  }

  /** True for IPv4 and IPv6 literals: connecting to them needs no DNS. */
  boolean isIpLiteral() {
    return isIpv6() || Character.isDigit(host.charAt(host.length() - 1));
  }

  /** The address of an IP literal, parsed without DNS. */
  InetAddress literalAddress() throws UnknownHostException {
    if (!isIpLiteral()) {
      throw new IllegalStateException(host + " is a name, not an address");
    }
    // Brackets make the JDK insist on an IPv6 literal; dotted quads are parsed numerically: no
    // lookup either way.
    return InetAddress.getByName(isIpv6() ? "[" + host + "]" : host);
  }

  /** {@code host:port}, with IPv6 literals in brackets. */
  String authority() {
    return (isIpv6() ? "[" + host + "]" : host) + ":" + port;
  }

  @Override
  public String toString() {
    return authority();
  }

  private static String canonicalIpv6(String inner) {
    if (inner.isEmpty()
        || inner.length() > 45
        || inner.indexOf(':') < 0
        || !inner.chars().allMatch(c -> Character.digit(c, 16) >= 0 || c == ':' || c == '.')) {
      throw new IllegalArgumentException("not an IPv6 literal (zone ids are not accepted)");
    }
    InetAddress address;
    try {
      address = InetAddress.getByName("[" + inner + "]");
    } catch (UnknownHostException e) {
      throw new IllegalArgumentException("not an IPv6 literal");
    }
    if (!(address instanceof Inet6Address)) {
      throw new IllegalArgumentException(
          "IPv4-mapped IPv6 literal: write the IPv4 address instead");
    }
    return address.getHostAddress();
  }

  private static String canonicalName(String text) {
    // ASCII only before lower-casing: some non-ASCII letters lower-case to ASCII ones (KELVIN SIGN
    // -> k).
    if (text.length() > 253 || !text.chars().allMatch(HostPort::isNameChar)) {
      throw new IllegalArgumentException(
          "host must be a DNS name (letters, digits, '-', '.') or an IP literal");
    }
    String name = text.toLowerCase(Locale.ROOT);
    String[] labels = name.split("\\.", -1);
    for (String label : labels) {
      if (label.isEmpty() || label.length() > 63 || label.startsWith("-") || label.endsWith("-")) {
        throw new IllegalArgumentException("malformed DNS label '" + label + "'");
      }
    }
    if (labels[labels.length - 1].chars().allMatch(Character::isDigit)) {
      requireDottedQuad(labels);
    }
    return name;
  }

  private static void requireDottedQuad(String[] labels) {
    boolean valid = labels.length == 4;
    for (int i = 0; valid && i < 4; i++) {
      String octet = labels[i];
      valid =
          octet.length() <= 3
              && octet.chars().allMatch(Character::isDigit)
              && (octet.length() == 1 || octet.charAt(0) != '0')
              && Integer.parseInt(octet) <= 255;
    }
    if (!valid) {
      throw new IllegalArgumentException("numeric host must be a dotted-quad IPv4 address");
    }
  }

  private static boolean isNameChar(int c) {
    return (c >= 'a' && c <= 'z')
        || (c >= 'A' && c <= 'Z')
        || (c >= '0' && c <= '9')
        || c == '-'
        || c == '.';
  }
}
