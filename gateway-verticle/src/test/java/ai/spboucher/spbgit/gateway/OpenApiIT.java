package ai.spboucher.spbgit.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Route;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The OpenAPI document is served and names every API route the gateway actually has, and no other;
 * every one of its operations validates the requests of its route.
 */
class OpenApiIT {

  @TempDir Path tmp;

  @Test
  void documentMatchesTheRoutes() throws Exception {
    try (TestGateway gateway = TestGateway.start(tmp.resolve("data"))) {
      var response = gateway.api("GET", "/api/v1/openapi.yaml", null, null);
      assertEquals(200, response.statusCode());
      JsonObject paths =
          new JsonObject(response.body().substring(response.body().indexOf('{')))
              .getJsonObject("paths");
      List<String> routed = new ArrayList<>();
      for (Route route : gateway.verticle.routes().getRoutes()) {
        String path = route.getPath();
        if (path == null
            || !path.startsWith("/api/v1/")
            || path.endsWith("/")
            || route.methods() == null) {
          continue;
        }
        String documented = path.replaceAll(":([a-z]+)", "{$1}");
        for (var method : route.methods()) {
          routed.add(method.name().toLowerCase() + " " + documented);
          assertTrue(
              paths.containsKey(documented)
                  && paths.getJsonObject(documented).containsKey(method.name().toLowerCase()),
              "undocumented route " + method + " " + path);
        }
      }
      paths.forEach(
          e ->
              ((JsonObject) e.getValue())
                  .fieldNames()
                  .forEach(
                      m ->
                          assertTrue(
                              routed.contains(m + " " + e.getKey()),
                              "documented but not routed: " + m + " " + e.getKey())));
      var contract = gateway.verticle.contract();
      assertEquals(
          contract.operations(),
          contract.boundOperations(),
          "operations whose route is not validated");
    }
  }
}
