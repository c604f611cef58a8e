package ai.spboucher.spbgit.gateway.http;

import io.vertx.core.Vertx;
import io.vertx.openapi.contract.OpenAPIContract;
import io.vertx.openapi.contract.Operation;
import io.vertx.openapi.contract.Parameter;
import io.vertx.openapi.validation.RequestParameter;
import io.vertx.openapi.validation.ValidatableRequest;
import io.vertx.openapi.validation.ValidatorException;
import io.vertx.openapi.validation.impl.RequestValidatorImpl;
import java.util.Map;

/**
 * The one place the gateway uses vertx-openapi's internal {@code
 * io.vertx.openapi.validation.impl.RequestValidatorImpl}, for its {@code validateParameter} and
 * {@code validateBody}. The public {@code RequestValidator.validate(request, operationId)} checks
 * the same, in the same order, but runs the check through the calling context's ordered {@code
 * executeBlocking}: every request to the API would be checked one at a time per event loop.
 * vertx-openapi {@value #WRITTEN_FOR} offers no public way to check a request on the caller's
 * thread.
 *
 * <p>{@code OpenApiValidationTest} checks requests through this class on a real Vert.x and fails on
 * any other vertx-openapi version: re-check {@code RequestValidatorImpl} in the new one's sources
 * before moving its pin.
 *
 * <p>Threading: {@link #check} blocks (schema checks); call it on a worker thread. It keeps no
 * state between calls and may run on many threads at once.
 */
final class OpenApiValidation {

  /** The vertx-openapi version this use of its internals was checked against. */
  static final String WRITTEN_FOR = "5.0.7";

  private final RequestValidatorImpl validator;

  OpenApiValidation(Vertx vertx, OpenAPIContract contract) {
    this.validator = new RequestValidatorImpl(vertx, contract);
  }

  /**
   * What vertx-openapi's {@code validate} checks, in its order: each parameter, then the body.
   * Blocking.
   *
   * @throws ValidatorException naming the parameter or body field that does not match
   */
  void check(ValidatableRequest request, Operation operation) throws ValidatorException {
    for (Parameter parameter : operation.getParameters()) {
      Map<String, RequestParameter> values =
          switch (parameter.getIn()) {
            case PATH -> request.getPathParameters();
            case QUERY -> request.getQuery();
            case HEADER -> request.getHeaders();
            case COOKIE -> request.getCookies();
          };
      validator.validateParameter(parameter, values.get(parameter.getName()));
    }
    validator.validateBody(operation.getRequestBody(), request);
  }
}
