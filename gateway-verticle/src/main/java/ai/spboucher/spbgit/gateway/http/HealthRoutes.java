package ai.spboucher.spbgit.gateway.http;

import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import io.vertx.micrometer.PrometheusScrapingHandler;
import java.util.function.BooleanSupplier;

/**
 * {@code /healthz} (the process serves), {@code /readyz} (it can take jobs: NATS is connected) and
 * {@code /metrics} (Prometheus). Unauthenticated by design, and they reveal no repository or job
 * data; put them behind the proxy's access rules if the gateway is exposed.
 */
public record HealthRoutes(BooleanSupplier natsConnected, PrometheusMeterRegistry registry) {

  public void mount(Router router) {
    router
        .get("/healthz")
        .handler(ctx -> Responses.json(ctx, 200, new JsonObject().put("status", "ok")));
    router.get("/readyz").handler(this::ready);
    router.get("/metrics").handler(PrometheusScrapingHandler.create(registry));
  }

  private void ready(RoutingContext ctx) {
    boolean nats = natsConnected.getAsBoolean();
    Responses.json(
        ctx,
        nats ? 200 : 503,
        new JsonObject()
            .put("status", nats ? "ready" : "not ready")
            .put("nats", nats ? "connected" : "disconnected"));
  }
}
