package ai.spboucher.spbgit.runner.egress;

import java.time.Duration;
import java.time.Instant;

/**
 * One egress attempt through an {@link EgressProxy}: what the job asked to reach, whether it was
 * let through and, if so, how much flowed and for how long. Attempts that never named a target
 * (garbage, an over-long or unfinished request head, a connection beyond the limit) produce no
 * record.
 *
 * @param startedAt when the proxy accepted the job's connection
 * @param method {@code CONNECT} for a tunnel, otherwise the plain-HTTP method ({@code GET}, {@code
 *     POST}, ...)
 * @param host the requested host, canonical: lower case, IPv6 literals without brackets
 * @param port the requested port
 * @param allowed whether the proxy let the job through to the target: false when the policy does
 *     not list it, or when a listed name resolved only to local addresses
 * @param bytesUp bytes sent from the job to the target; for plain HTTP this includes the rewritten
 *     request head
 * @param bytesDown bytes sent from the target to the job (the proxy's own {@code 200} for CONNECT
 *     excluded)
 * @param duration from {@code startedAt} until both sides were closed
 * @param failure why the attempt did not reach the target ({@code "not on the allow-list"}, {@code
 *     "connection refused"}, ...); {@code null} when a tunnel to the target was established
 */
public record EgressRecord(
    Instant startedAt,
    String method,
    String host,
    int port,
    boolean allowed,
    long bytesUp,
    long bytesDown,
    Duration duration,
    String failure) {

  /** {@code host:port}, with IPv6 literals in brackets. */
  public String target() {
    return new HostPort(host, port).authority();
  }
}
