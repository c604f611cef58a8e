package ai.spboucher.spbgit.gateway.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.openapi.contract.OpenAPIContract;
import io.vertx.openapi.contract.Operation;
import io.vertx.openapi.validation.RequestParameter;
import io.vertx.openapi.validation.SchemaValidationException;
import io.vertx.openapi.validation.ValidatableRequest;
import io.vertx.openapi.validation.ValidatorException;
import java.io.IOException;
import java.io.InputStream;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Pins vertx-openapi's internal validator that {@link OpenApiValidation} uses: requests are checked
 * through it against a real contract on a real Vert.x, and vertx-openapi must be the version it was
 * checked against, so that an upgrade fails here first.
 */
class OpenApiValidationTest {

  private static Vertx vertx;
  private static OpenAPIContract contract;

  @BeforeAll
  static void loadContract() throws Exception {
    vertx = Vertx.vertx();
    JsonObject name =
        new JsonObject()
            .put("name", "name")
            .put("in", "path")
            .put("required", true)
            .put("schema", new JsonObject().put("type", "string").put("pattern", "^[a-z]+$"));
    JsonObject limit =
        new JsonObject()
            .put("name", "limit")
            .put("in", "query")
            .put("schema", new JsonObject().put("type", "integer").put("maximum", 10));
    JsonObject body =
        new JsonObject()
            .put("type", "object")
            .put("required", new JsonArray().add("ttl"))
            .put(
                "properties",
                new JsonObject()
                    .put("ttl", new JsonObject().put("type", "integer").put("maximum", 60)));
    JsonObject operation =
        new JsonObject()
            .put("operationId", "renameThing")
            .put("parameters", new JsonArray().add(name).add(limit))
            .put(
                "requestBody",
                new JsonObject()
                    .put("required", true)
                    .put(
                        "content",
                        new JsonObject()
                            .put("application/json", new JsonObject().put("schema", body))))
            .put(
                "responses",
                new JsonObject().put("200", new JsonObject().put("description", "renamed")));
    JsonObject document =
        new JsonObject()
            .put("openapi", "3.1.0")
            .put("info", new JsonObject().put("title", "things").put("version", "1"))
            .put(
                "paths",
                new JsonObject().put("/things/{name}", new JsonObject().put("post", operation)));
    contract =
        OpenAPIContract.from(vertx, document)
            .toCompletionStage()
            .toCompletableFuture()
            .get(30, TimeUnit.SECONDS);
  }

  @AfterAll
  static void closeVertx() throws Exception {
    vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
  }

  @Test
  void vertxOpenApiIsTheVersionTheValidatorWasCheckedAgainst() throws IOException {
    Properties pom = new Properties();
    try (InputStream in =
        OpenAPIContract.class
            .getClassLoader()
            .getResourceAsStream("META-INF/maven/io.vertx/vertx-openapi/pom.properties")) {
      assertNotNull(in, "vertx-openapi carries no pom.properties");
      pom.load(in);
    }
    String version = pom.getProperty("version");
    assertEquals(
        OpenApiValidation.WRITTEN_FOR,
        version,
        "vertx-openapi is "
            + version
            + ", but gateway.http.OpenApiValidation uses its internal RequestValidatorImpl,"
            + " checked against "
            + OpenApiValidation.WRITTEN_FOR
            + ": re-check it against the new version's sources, then move WRITTEN_FOR");
  }

  @Test
  void passesARequestThatMatches() throws ValidatorException {
    validation().check(request("abc", "5", "{\"ttl\": 30}"), operation());
  }

  @Test
  void refusesAPathParameterOutsideItsPattern() {
    ValidatorException e =
        assertThrows(
            ValidatorException.class,
            () -> validation().check(request("ABC", "5", "{\"ttl\": 30}"), operation()));
    assertTrue(e.getMessage().contains("name"), e.getMessage());
  }

  @Test
  void refusesAQueryParameterOverItsMaximum() {
    ValidatorException e =
        assertThrows(
            ValidatorException.class,
            () -> validation().check(request("abc", "11", "{\"ttl\": 30}"), operation()));
    assertTrue(e.getMessage().contains("limit"), e.getMessage());
  }

  @Test
  void refusesABodyThatDoesNotMatchItsSchema() {
    SchemaValidationException e =
        assertThrows(
            SchemaValidationException.class,
            () -> validation().check(request("abc", null, "{\"ttl\": 61}"), operation()));
    assertNotNull(e.getOutputUnit(), "the failed schema keyword, for ApiContract's message");
    assertThrows(
        ValidatorException.class,
        () -> validation().check(request("abc", null, "{}"), operation()));
  }

  private static OpenApiValidation validation() {
    return new OpenApiValidation(vertx, contract);
  }

  private static Operation operation() {
    return contract.operation("renameThing");
  }

  private static ValidatableRequest request(String name, String limit, String body) {
    return new Request(
        Map.of("name", () -> name), Map.of("limit", () -> limit), () -> Buffer.buffer(body));
  }

  /** A request as ApiContract hands it on: raw path and query strings, the body as a buffer. */
  private record Request(
      Map<String, RequestParameter> path,
      Map<String, RequestParameter> query,
      RequestParameter body)
      implements ValidatableRequest {

    @Override
    public Map<String, RequestParameter> getCookies() {
      return Map.of();
    }

    @Override
    public Map<String, RequestParameter> getHeaders() {
      return Map.of();
    }

    @Override
    public Map<String, RequestParameter> getPathParameters() {
      return path;
    }

    @Override
    public Map<String, RequestParameter> getQuery() {
      return query;
    }

    @Override
    public RequestParameter getBody() {
      return body;
    }

    @Override
    public String getContentType() {
      return "application/json";
    }
  }
}
