package ai.spboucher.spbgit.gateway.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class ConnectionLimitsTest {

  private static ConnectionLimits withCap(int maxConnections) {
    return new ConnectionLimits(
        Duration.ofSeconds(10), Duration.ofMinutes(5), maxConnections, 1024);
  }

  @Test
  void theDefaultCapIsLoweredToLeaveDescriptorsForEverythingElse() {
    assertEquals(ConnectionLimits.DEFAULT_MAX_CONNECTIONS, withCap(0).capFor(1_048_576));
    assertEquals(1024 - ConnectionLimits.RESERVED_DESCRIPTORS, withCap(0).capFor(1024));
  }

  @Test
  void aConfiguredCapThatDoesNotFitTheDescriptorLimitFailsTheStart() {
    assertEquals(400, withCap(400).capFor(1024));
    var e = assertThrows(IllegalArgumentException.class, () -> withCap(4096).capFor(1024));
    assertTrue(
        e.getMessage().contains("SPB_MAX_CONNECTIONS=4096") && e.getMessage().contains("1024"),
        e.getMessage());
  }

  @Test
  void refusesTimeoutsThatWouldCutHealthyConnections() {
    assertThrows(
        IllegalArgumentException.class,
        () -> new ConnectionLimits(Duration.ZERO, Duration.ofMinutes(5), 0, 1024));
    // Shorter than two websocket pings: a viewer of a quiet job would be cut.
    assertThrows(
        IllegalArgumentException.class,
        () -> new ConnectionLimits(Duration.ofSeconds(10), Duration.ofSeconds(59), 0, 1024));
    assertThrows(
        IllegalArgumentException.class,
        () -> new ConnectionLimits(Duration.ofSeconds(10), Duration.ofMinutes(5), 0, 0));
  }
}
