package ai.spboucher.spbgit.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.json.JsonObject;
import java.nio.file.Path;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

class GatewayConfigTest {

  /** Read by the launcher rather than by GatewayConfig, and documented with it. */
  private static final Set<String> READ_ELSEWHERE = Set.of("SPB_LOG_FORMAT");

  @Test
  void everySettingIsDocumentedWithTheDefaultItHas() throws Exception {
    DocumentedSettings documented = DocumentedSettings.under("### The gateway");
    Set<String> undocumented = new TreeSet<>(GatewayConfig.ENVIRONMENT.keySet());
    undocumented.removeAll(documented.variables());
    assertEquals(Set.of(), undocumented, "settings missing from docs/operations.md");
    Set<String> unknown = new TreeSet<>(documented.variables());
    unknown.removeAll(GatewayConfig.ENVIRONMENT.keySet());
    unknown.removeAll(READ_ELSEWHERE);
    assertEquals(Set.of(), unknown, "documented settings the gateway does not read");
    GatewayConfig defaults = GatewayConfig.from(GatewayConfig.fromEnvironment(Map.of()));
    int literals = 0;
    for (String variable : GatewayConfig.ENVIRONMENT.keySet()) {
      var literal = documented.literalDefault(variable);
      if (literal.isPresent()) {
        literals++;
        assertEquals(
            defaults,
            GatewayConfig.from(GatewayConfig.fromEnvironment(Map.of(variable, literal.get()))),
            variable + "=" + literal.get() + " as documented is not the default");
      }
    }
    assertTrue(literals >= 15, "only " + literals + " documented defaults were literals");
  }

  @Test
  void defaultsAreTheDocumentedOnes() {
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
    GatewayConfig config =
        GatewayConfig.from(
            GatewayConfig.fromEnvironment(
                Map.of(
                    "SPB_DATA_DIR",
                    "/srv/spb",
                    "SPB_HTTP_PORT",
                    "0",
                    "SPB_PUBLIC_URL",
                    "https://git.example.org/",
                    "SPB_MAX_PUSH_BYTES",
                    "64k")));
    assertEquals(Path.of("/srv/spb"), config.dataDir());
    assertEquals(0, config.httpPort());
    assertEquals("https://git.example.org", config.publicUrl(1234));
    assertEquals(64 << 10, config.maxPushBytes());
  }

  @Test
  void boundsWhatAPushCostsOnceInflatedByDefault() {
    GatewayConfig defaults = GatewayConfig.from(GatewayConfig.fromEnvironment(Map.of()));
    assertEquals(512L << 20, defaults.maxPushInflatedBytes());
    assertEquals(250, defaults.maxDeltaDepth());
    assertEquals(java.time.Duration.ofMinutes(10), defaults.pushTimeLimit());
    GatewayConfig set =
        GatewayConfig.from(
            GatewayConfig.fromEnvironment(
                Map.of(
                    "SPB_MAX_PUSH_INFLATED_BYTES",
                    "4g",
                    "SPB_MAX_DELTA_DEPTH",
                    "50",
                    "SPB_PUSH_TIME_LIMIT",
                    "90s")));
    assertEquals(4L << 30, set.maxPushInflatedBytes());
    assertEquals(50, set.maxDeltaDepth());
    assertEquals(java.time.Duration.ofSeconds(90), set.pushTimeLimit());
    for (String[] nonsense :
        new String[][] {
          {"maxPushInflatedBytes", "0"}, {"maxDeltaDepth", "0"}, {"pushTimeLimit", "0s"}
        }) {
      assertThrows(
          IllegalArgumentException.class,
          () -> GatewayConfig.from(new JsonObject().put(nonsense[0], nonsense[1])),
          nonsense[0]);
    }
  }

  @Test
  void failsFastOnNonsense() {
    assertThrows(
        IllegalArgumentException.class,
        () -> GatewayConfig.from(new JsonObject().put("httpPort", "70000")));
    assertThrows(
        IllegalArgumentException.class,
        () -> GatewayConfig.from(new JsonObject().put("httpPort", "x")));
    assertThrows(
        IllegalArgumentException.class,
        () -> GatewayConfig.from(new JsonObject().put("maxPushBytes", "0")));
    assertThrows(
        IllegalArgumentException.class,
        () -> GatewayConfig.from(new JsonObject().put("publicUrl", "ftp://x")));
    assertThrows(
        IllegalArgumentException.class,
        () -> GatewayConfig.from(new JsonObject().put("maxConnections", "0")));
    assertThrows(
        IllegalArgumentException.class,
        () -> GatewayConfig.from(new JsonObject().put("headTimeout", "0s")));
  }

  @Test
  void diffTimeBudgetDefaultsToThreeSecondsAndStaysBetweenOneSecondAndTenMinutes() {
    assertEquals(
        java.time.Duration.ofSeconds(3), GatewayConfig.from(new JsonObject()).diffTimeBudget());
    assertEquals(
        java.time.Duration.ofSeconds(30),
        GatewayConfig.from(GatewayConfig.fromEnvironment(Map.of("SPB_DIFF_TIME_BUDGET", "30s")))
            .diffTimeBudget());
    for (String outOfBounds : new String[] {"0s", "11m"}) {
      assertThrows(
          IllegalArgumentException.class,
          () -> GatewayConfig.from(new JsonObject().put("diffTimeBudget", outOfBounds)));
    }
  }
}
