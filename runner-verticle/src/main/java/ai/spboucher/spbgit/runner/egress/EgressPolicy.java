package ai.spboucher.spbgit.runner.egress;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * The network destinations one job may reach: an allow-list of {@code host:port} entries.
 *
 * <p>Entries are parsed strictly: {@code name:port}, {@code a.b.c.d:port}, {@code [v6]:port}, or
 * the suffix wildcard {@code *.name:port}. The port is always required and exact (1 to 65535).
 * Anything else, including a bare host, port 0, spaces, schemes, paths or zone ids, is rejected
 * with an {@link IllegalArgumentException} naming the entry.
 *
 * <p>Matching is on the text the job asked for, never on DNS: host names compare
 * case-insensitively, IPv6 literals compare by address ({@code [::1]} and {@code [0:0:0:0:0:0:0:1]}
 * are the same entry), and a name is never equal to an address. So listing {@code 127.0.0.1:8080}
 * does not admit {@code localhost:8080}, and listing {@code localhost:8080} does not admit {@code
 * 127.0.0.1:8080}: an agent cannot reach a port by finding another spelling that happens to resolve
 * there. {@code *.example.org:443} admits any name with at least one more label in front ({@code
 * a.example.org}, {@code a.b.example.org}) but not {@code example.org} itself; a wildcard needs at
 * least two labels after it and never matches an IP literal.
 *
 * <p>Instances are immutable and safe to share between threads.
 */
public final class EgressPolicy {

  private static final EgressPolicy DENY_ALL = new EgressPolicy(List.of(), Set.of(), Set.of());

  private final List<String> entries;
  private final Set<HostPort> exact;
  private final Set<HostPort> suffixes;

  private EgressPolicy(List<String> entries, Set<HostPort> exact, Set<HostPort> suffixes) {
    this.entries = entries;
    this.exact = exact;
    this.suffixes = suffixes;
  }

  /** A policy admitting nothing. */
  public static EgressPolicy denyAll() {
    return DENY_ALL;
  }

  /** A policy admitting exactly {@code entries}; duplicates are allowed and collapse. */
  public static EgressPolicy of(String... entries) {
    return of(Arrays.asList(entries));
  }

  /** A policy admitting exactly {@code entries}; duplicates are allowed and collapse. */
  public static EgressPolicy of(Collection<String> entries) {
    Set<String> canonical = new LinkedHashSet<>();
    Set<HostPort> exact = new LinkedHashSet<>();
    Set<HostPort> suffixes = new LinkedHashSet<>();
    for (String entry : entries) {
      try {
        if (entry != null && entry.startsWith("*.")) {
          HostPort suffix = wildcardSuffix(entry.substring(2));
          suffixes.add(suffix);
          canonical.add("*." + suffix.authority());
        } else {
          HostPort target = HostPort.parse(entry);
          exact.add(target);
          canonical.add(target.authority());
        }
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException(
            "invalid egress entry '" + entry + "': " + e.getMessage(), e);
      }
    }
    return new EgressPolicy(List.copyOf(canonical), Set.copyOf(exact), Set.copyOf(suffixes));
  }

  /**
   * Parses a list written in one string, entries separated by commas and/or white space (for
   * example an environment variable); a blank string gives {@link #denyAll()}.
   */
  public static EgressPolicy parse(String list) {
    List<String> entries = new ArrayList<>();
    for (String entry : list.trim().split("[,\\s]+")) {
      if (!entry.isEmpty()) {
        entries.add(entry);
      }
    }
    return of(entries);
  }

  /**
   * Whether a job may reach {@code host:port}. {@code host} is written as in a URL authority (IPv6
   * with or without brackets); a host that is not a valid name or literal is simply not admitted.
   */
  public boolean admits(String host, int port) {
    if (host == null || port < 1 || port > 65535) {
      return false;
    }
    String bracketed = host.indexOf(':') >= 0 && !host.startsWith("[") ? "[" + host + "]" : host;
    try {
      return admits(new HostPort(HostPort.canonicalHost(bracketed), port));
    } catch (IllegalArgumentException e) {
      return false;
    }
  }

  boolean admits(HostPort target) {
    if (exact.contains(target)) {
      return true;
    }
    if (target.isIpLiteral()) {
      return false;
    }
    for (HostPort suffix : suffixes) {
      if (suffix.port() == target.port() && target.host().endsWith("." + suffix.host())) {
        return true;
      }
    }
    return false;
  }

  /** The entries in canonical form, in the order given, without duplicates. */
  public List<String> entries() {
    return entries;
  }

  public boolean isEmpty() {
    return entries.isEmpty();
  }

  @Override
  public String toString() {
    return "EgressPolicy" + entries;
  }

  private static HostPort wildcardSuffix(String rest) {
    HostPort suffix = HostPort.parse(rest);
    if (suffix.isIpLiteral()) {
      throw new IllegalArgumentException("wildcards apply to DNS names, not IP addresses");
    }
    if (suffix.host().indexOf('.') < 0) {
      throw new IllegalArgumentException("a wildcard needs at least two labels after '*.'");
    }
    return suffix;
  }
}
