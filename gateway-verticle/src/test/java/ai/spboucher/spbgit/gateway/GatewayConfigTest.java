package ai.spboucher.spbgit.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.vertx.core.json.JsonObject;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;

class GatewayConfigTest {

  @Test
  void defaultsMatchTheReadme() {
    GatewayConfig config = GatewayConfig.from(GatewayConfig.fromEnvironment(Map.of()));
    assertEquals(Path.of("data"), config.dataDir());
    assertEquals("127.0.0.1", config.httpHost());
    assertEquals(8080, config.httpPort());
    assertNull(config.publicUrl());
    assertEquals(2L << 30, config.maxPushBytes());
    assertEquals(100L << 20, config.maxObjectBytes());
    assertEquals("http://127.0.0.1:8080", config.publicUrl(8080));
    assertEquals(java.time.Duration.ofSeconds(10), config.connections().headTimeout());
    assertEquals(java.time.Duration.ofMinutes(5), config.connections().idleTimeout());
    assertEquals(4096, config.connections().capFor(1 << 20));
    assertEquals(1024, config.connections().maxConnectionsPerAddress());
  }

  @Test
  void readsTheEnvironment() {
    GatewayConfig config = GatewayConfig.from(GatewayConfig.fromEnvironment(Map.of(
        "SPB_DATA_DIR", "/srv/spb", "SPB_HTTP_PORT", "0", "SPB_PUBLIC_URL", "https://git.example.org/",
        "SPB_MAX_PUSH_BYTES", "64k")));
    assertEquals(Path.of("/srv/spb"), config.dataDir());
    assertEquals(0, config.httpPort());
    assertEquals("https://git.example.org", config.publicUrl(1234));
    assertEquals(64 << 10, config.maxPushBytes());
  }

  @Test
  void failsFastOnNonsense() {
    assertThrows(IllegalArgumentException.class, () -> GatewayConfig.from(new JsonObject().put("httpPort", "70000")));
    assertThrows(IllegalArgumentException.class, () -> GatewayConfig.from(new JsonObject().put("httpPort", "x")));
    assertThrows(IllegalArgumentException.class, () -> GatewayConfig.from(new JsonObject().put("maxPushBytes", "0")));
    assertThrows(IllegalArgumentException.class, () -> GatewayConfig.from(new JsonObject().put("publicUrl", "ftp://x")));
    assertThrows(IllegalArgumentException.class, () -> GatewayConfig.from(new JsonObject().put("maxConnections", "0")));
    assertThrows(IllegalArgumentException.class, () -> GatewayConfig.from(new JsonObject().put("headTimeout", "0s")));
  }

  @Test
  void diffTimeBudgetDefaultsToThreeSecondsAndStaysBetweenOneSecondAndTenMinutes() {
    assertEquals(java.time.Duration.ofSeconds(3), GatewayConfig.from(new JsonObject()).diffTimeBudget());
    assertEquals(java.time.Duration.ofSeconds(30), GatewayConfig.from(GatewayConfig.fromEnvironment(
        Map.of("SPB_DIFF_TIME_BUDGET", "30s"))).diffTimeBudget());
    for (String outOfBounds : new String[] {"0s", "11m"}) {
      assertThrows(IllegalArgumentException.class,
          () -> GatewayConfig.from(new JsonObject().put("diffTimeBudget", outOfBounds)));
    }
  }
}
