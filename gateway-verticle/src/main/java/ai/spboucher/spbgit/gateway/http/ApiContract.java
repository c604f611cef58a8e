package ai.spboucher.spbgit.gateway.http;

import ai.spboucher.spbgit.gateway.errors.RequestException;
import io.vertx.core.DeploymentOptions;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.ThreadingModel;
import io.vertx.core.VerticleBase;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.Cookie;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.json.JsonObject;
import io.vertx.core.json.pointer.JsonPointer;
import io.vertx.ext.web.Route;
import io.vertx.ext.web.RoutingContext;
import io.vertx.json.schema.OutputUnit;
import io.vertx.openapi.contract.OpenAPIContract;
import io.vertx.openapi.contract.Operation;
import io.vertx.openapi.contract.Parameter;
import io.vertx.openapi.validation.RequestParameter;
import io.vertx.openapi.validation.SchemaValidationException;
import io.vertx.openapi.validation.ValidatableRequest;
import io.vertx.openapi.validation.ValidatorException;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Function;

/**
 * The REST API's OpenAPI document ({@value #DOCUMENT}, served at {@code /api/v1/openapi.yaml}),
 * loaded once at start, and the check of every request against it: a route bound to an operation
 * has its path and query parameters and its JSON body validated before its handler runs, and a
 * request that does not match fails with a {@link RequestException.Invalid} naming the parameter or
 * field. The handlers keep their own checks.
 *
 * <p>Threading: the schema checks run on a worker thread, unordered: vertx-openapi's own {@code
 * validate} runs them through one ordered {@code executeBlocking} of the caller's context, which
 * would check all the API's requests one at a time. The route's next handler runs back on the
 * request's context. The request is paused meanwhile; a websocket upgrade stays paused for its
 * handler's {@code toWebSocket()}.
 */
public final class ApiContract {

  /** The document's resource path. */
  public static final String DOCUMENT = "api/openapi.yaml";

  private final OpenAPIContract contract;
  private final OpenApiValidation validation;
  private final Set<String> bound = new TreeSet<>();

  private ApiContract(Vertx vertx, OpenAPIContract contract) {
    this.contract = contract;
    this.validation = new OpenApiValidation(vertx, contract);
  }

  /**
   * Reads and checks the document (a malformed one fails the start). vertx-openapi builds the
   * contract in callbacks on the calling context, which takes seconds on a cold JVM: a short-lived
   * worker verticle does it, so no event loop waits.
   */
  public static Future<ApiContract> load(Vertx vertx) {
    Promise<OpenAPIContract> loaded = Promise.promise();
    return vertx
        .deployVerticle(
            new VerticleBase() {
              @Override
              public Future<?> start() {
                return OpenAPIContract.from(vertx, DOCUMENT).onComplete(loaded);
              }
            },
            new DeploymentOptions().setThreadingModel(ThreadingModel.WORKER))
        .compose(vertx::undeploy)
        .transform(deployed -> loaded.future())
        .map(contract -> new ApiContract(vertx, contract));
  }

  /**
   * Validates requests on {@code route} against the operation {@code operationId} before the
   * route's next handler. The route's method and path must be the operation's, or this throws: a
   * route and its description cannot drift apart.
   */
  public Route validated(Route route, String operationId) {
    Operation operation = contract.operation(operationId);
    if (operation == null) {
      throw new IllegalStateException(DOCUMENT + " has no operation " + operationId);
    }
    String path = operation.getOpenAPIPath().replaceAll("\\{([^}/]+)}", ":$1");
    if (!path.equals(route.getPath())
        || route.methods() == null
        || !route.methods().equals(Set.of(operation.getHttpMethod()))) {
      throw new IllegalStateException(
          "operation "
              + operationId
              + " is "
              + operation.getHttpMethod()
              + " "
              + operation.getOpenAPIPath()
              + ", not the route "
              + route.methods()
              + " "
              + route.getPath());
    }
    bound.add(operationId);
    return route.handler(ctx -> validate(ctx, operation));
  }

  /** The operations bound to a route so far. */
  public Set<String> boundOperations() {
    return Set.copyOf(bound);
  }

  /** Every operation in the document. */
  public Set<String> operations() {
    Set<String> ids = new TreeSet<>();
    contract.operations().forEach(o -> ids.add(o.getOperationId()));
    return ids;
  }

  private void validate(RoutingContext ctx, Operation operation) {
    if (!operation.getSecurityRequirements().isEmpty()) {
      // Who may call comes before what they sent: an anonymous caller learns 401, not which field
      // is wrong.
      ApiRoutes.requireOwner(ctx);
    }
    HttpServerRequest request = ctx.request();
    // A websocket upgrade needs its request unread: without the pause, its end arrives while
    // validation runs.
    boolean paused = !request.isEnded();
    if (paused) {
      request.pause();
    }
    boolean upgrade = "websocket".equalsIgnoreCase(request.getHeader(HttpHeaders.UPGRADE));
    RoutedRequest routed = new RoutedRequest(ctx, operation);
    ctx.vertx()
        .executeBlocking(() -> check(routed, operation), false)
        .onSuccess(
            valid -> {
              if (paused && !upgrade) {
                request.resume();
              }
              ctx.next();
            })
        .onFailure(
            e -> {
              if (paused) {
                request.resume();
              }
              ctx.fail(
                  e instanceof ValidatorException invalid
                      ? new RequestException.Invalid(messageOf(invalid, operation))
                      : e);
            });
  }

  /** Blocking. */
  private boolean check(RoutedRequest request, Operation operation) throws ValidatorException {
    validation.check(request, operation);
    return true;
  }

  /**
   * The validator's own message names the parameter or the body field; when the schema that failed
   * has a description (a repository name, a job id, a body field), that description says what was
   * expected.
   */
  private String messageOf(ValidatorException e, Operation operation) {
    String message =
        e.getMessage() == null ? "the request does not match " + DOCUMENT : e.getMessage();
    if (e instanceof SchemaValidationException invalid && invalid.getOutputUnit() != null) {
      String expected = expectationOf(invalid.getOutputUnit(), operation);
      if (expected != null) {
        message += "; expected " + expected;
      }
    }
    return message;
  }

  /**
   * The description of the schema whose keyword failed. Its location is absolute for a named schema
   * ({@code #/components/schemas/RepoName/pattern}) and relative to the body's schema otherwise
   * ({@code #/properties/ttl/maximum}); parameters carry none.
   */
  private String expectationOf(OutputUnit unit, Operation operation) {
    List<OutputUnit> errors = unit.getErrors();
    OutputUnit leaf = errors == null || errors.isEmpty() ? unit : errors.get(errors.size() - 1);
    String location = leaf.getAbsoluteKeywordLocation();
    int fragment = location == null ? -1 : location.indexOf('#');
    if (fragment < 0 || location.lastIndexOf('/') <= fragment) {
      return null;
    }
    String keyword = location.substring(fragment + 1);
    JsonPointer schema = JsonPointer.from(keyword.substring(0, keyword.lastIndexOf('/')));
    Object base =
        keyword.startsWith("/components/") ? contract.getRawContract() : bodySchemaOf(operation);
    Object found = base == null ? null : schema.queryJson(base);
    return found instanceof JsonObject object ? object.getString("description") : null;
  }

  private JsonObject bodySchemaOf(Operation operation) {
    Object schema =
        JsonPointer.create()
            .append("paths")
            .append(operation.getOpenAPIPath())
            .append(operation.getHttpMethod().name().toLowerCase())
            .append(List.of("requestBody", "content", "application/json", "schema"))
            .queryJson(contract.getRawContract());
    if (schema instanceof JsonObject object && object.getString("$ref", "").startsWith("#/")) {
      schema =
          JsonPointer.from(object.getString("$ref").substring(1))
              .queryJson(contract.getRawContract());
    }
    return schema instanceof JsonObject object ? object : null;
  }

  /**
   * The request as the router already parsed it: path parameters decoded by the route, query
   * parameters, and the body that {@code BodyHandler} read. The body is checked as JSON whatever
   * its Content-Type, as the handlers read it.
   */
  private static final class RoutedRequest implements ValidatableRequest {

    private final Map<String, RequestParameter> cookies = new HashMap<>();
    private final Map<String, RequestParameter> headers = new HashMap<>();
    private final Map<String, RequestParameter> path = new HashMap<>();
    private final Map<String, RequestParameter> query = new HashMap<>();
    private final RequestParameter body;

    RoutedRequest(RoutingContext ctx, Operation operation) {
      for (Parameter parameter : operation.getParameters()) {
        String name = parameter.getName();
        switch (parameter.getIn()) {
          case PATH -> path.put(name, valueOf(ctx.pathParam(name)));
          case QUERY -> query.put(name, valueOf(first(ctx.queryParam(name))));
          case HEADER -> headers.put(name, valueOf(ctx.request().getHeader(name)));
          case COOKIE ->
              cookies.put(
                  name, valueOf(mapOrNull(ctx.request().getCookie(name), Cookie::getValue)));
        }
      }
      Buffer buffer =
          operation.getRequestBody() == null || ctx.body() == null ? null : ctx.body().buffer();
      body = valueOf(buffer);
    }

    private static RequestParameter valueOf(Object value) {
      return () -> value;
    }

    private static String first(List<String> values) {
      return values.isEmpty() ? null : values.get(0);
    }

    private static <T> String mapOrNull(T value, Function<T, String> f) {
      return value == null ? null : f.apply(value);
    }

    @Override
    public Map<String, RequestParameter> getCookies() {
      return cookies;
    }

    @Override
    public Map<String, RequestParameter> getHeaders() {
      return headers;
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
