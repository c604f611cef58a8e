package ai.spboucher.spbgit.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Health, readiness and metrics endpoints, with NATS unreachable (the gateway still serves git).
 */
class HealthIT {

  @TempDir Path tmp;

  @Test
  void liveButNotReadyWithoutNatsAndExposesMetrics() throws Exception {
    try (TestGateway gateway =
        TestGateway.start(
            tmp.resolve("data"),
            new io.vertx.core.json.JsonObject().put("natsUrl", "nats://127.0.0.1:" + freePort()))) {
      assertEquals(200, gateway.api("GET", "/healthz", null, null).statusCode());
      var ready = gateway.api("GET", "/readyz", null, null);
      assertEquals(503, ready.statusCode());
      assertTrue(ready.body().contains("\"nats\":\"disconnected\""), ready.body());
      String metrics = gateway.api("GET", "/metrics", null, null).body();
      assertTrue(metrics.contains("spb_jobs{status=\"finished\"}"), metrics);
      assertTrue(metrics.contains("spb_job_queue_depth"), metrics);
      gateway.createRepo("still-serving");
      var refused =
          gateway.api(
              "POST",
              "/api/v1/repos/still-serving/agent-jobs",
              gateway.ownerToken,
              "{\"task\":\"t\",\"exec\":\"true\"}");
      assertEquals(503, refused.statusCode(), refused.body());
      assertTrue(refused.body().contains("NATS"), refused.body());
    }
  }

  private static int freePort() throws java.io.IOException {
    try (java.net.ServerSocket s = new java.net.ServerSocket(0)) {
      return s.getLocalPort();
    }
  }
}
