package ai.spboucher.spbgit.gateway.http;

import java.time.Duration;

/**
 * How long a connection may take to send a request head or sit idle, and how many connections the
 * gateway holds open, in all and from one client address.
 *
 * @param headTimeout the longest a connection may take from opening, or from its previous response,
 *     to a complete request head
 * @param idleTimeout the longest a connection may go without a byte read or written (websocket
 *     viewers are pinged well within it)
 * @param maxConnections the most open connections, or 0 for {@link #DEFAULT_MAX_CONNECTIONS}
 *     lowered to fit the process's file-descriptor limit
 * @param maxConnectionsPerAddress the most open connections from one client address
 */
public record ConnectionLimits(
    Duration headTimeout, Duration idleTimeout, int maxConnections, int maxConnectionsPerAddress) {

  public static final int DEFAULT_MAX_CONNECTIONS = 4096;

  /**
   * Descriptors left for what is not a client connection: repositories' pack files, logs, NATS, the
   * JVM's jars.
   */
  public static final int RESERVED_DESCRIPTORS = 512;

  /** Websocket viewers are pinged this often, so no idle timeout may be shorter than twice this. */
  public static final Duration WEBSOCKET_PING_INTERVAL = Duration.ofSeconds(30);

  public ConnectionLimits {
    if (headTimeout.toSeconds() < 1 || headTimeout.compareTo(Duration.ofMinutes(10)) > 0) {
      throw new IllegalArgumentException(
          "SPB_HEAD_TIMEOUT must be between 1s and 10m, got " + headTimeout);
    }
    if (idleTimeout.compareTo(WEBSOCKET_PING_INTERVAL.multipliedBy(2)) < 0) {
      throw new IllegalArgumentException(
          "SPB_IDLE_TIMEOUT must be at least 1m (websocket viewers are pinged every "
              + WEBSOCKET_PING_INTERVAL.toSeconds()
              + " s), got "
              + idleTimeout);
    }
    if (maxConnections < 0 || maxConnectionsPerAddress < 1) {
      throw new IllegalArgumentException(
          "SPB_MAX_CONNECTIONS and SPB_MAX_CONNECTIONS_PER_ADDRESS must be positive");
    }
  }

  /**
   * The connection cap for a process that may open {@code descriptorLimit} files: the configured
   * cap, which must leave {@link #RESERVED_DESCRIPTORS} free, or the default lowered to do so.
   *
   * @throws IllegalArgumentException when a configured cap does not fit
   */
  public int capFor(long descriptorLimit) {
    long room = descriptorLimit - RESERVED_DESCRIPTORS;
    if (maxConnections == 0) {
      return (int) Math.max(1, Math.min(DEFAULT_MAX_CONNECTIONS, room));
    }
    if (maxConnections > room) {
      throw new IllegalArgumentException(
          "SPB_MAX_CONNECTIONS="
              + maxConnections
              + " does not fit the process's "
              + "file-descriptor limit of "
              + descriptorLimit
              + " ("
              + RESERVED_DESCRIPTORS
              + " stay for repositories, "
              + "logs and NATS): raise `ulimit -n` or lower SPB_MAX_CONNECTIONS");
    }
    return maxConnections;
  }
}
