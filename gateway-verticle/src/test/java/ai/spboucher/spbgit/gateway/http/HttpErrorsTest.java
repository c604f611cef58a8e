package ai.spboucher.spbgit.gateway.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import ai.spboucher.spbgit.gateway.errors.RequestException;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Each kind of {@link RequestException} answers its own status, from the one table. */
class HttpErrorsTest {

  @Test
  void eachKindOfRefusalHasItsStatus() {
    Map<RequestException, Integer> expected =
        Map.of(
            new RequestException.Invalid("x"), 400,
            new RequestException.Unauthenticated("x"), 401,
            new RequestException.Forbidden("x"), 403,
            new RequestException.NotFound("x"), 404,
            new RequestException.Conflict("x"), 409,
            new RequestException.TooLarge("x"), 413,
            new RequestException.Unavailable("x"), 503);
    expected.forEach(
        (failure, status) ->
            assertEquals(
                status, HttpErrors.statusOf(failure, -1), failure.getClass().getSimpleName()));
    assertEquals(
        List.of(RequestException.class.getPermittedSubclasses()).size(),
        expected.size(),
        "every kind is checked above");
  }

  @Test
  void noKindOfRefusalIsAServerFault() {
    for (Class<?> kind : RequestException.class.getPermittedSubclasses()) {
      RequestException failure = instanceOf(kind);
      assertNotEquals(500, HttpErrors.statusOf(failure, -1), kind.getSimpleName() + " unmapped");
    }
  }

  @Test
  void anInvalidRequestGivesWayToTheStatusTheHandlerAskedFor() {
    assertEquals(415, HttpErrors.statusOf(new RequestException.Invalid("x"), 415));
    assertEquals(404, HttpErrors.statusOf(new RequestException.NotFound("x"), 400));
  }

  private static RequestException instanceOf(Class<?> kind) {
    try {
      return (RequestException)
          Arrays.stream(kind.getConstructors())
              .filter(c -> Arrays.equals(c.getParameterTypes(), new Class<?>[] {String.class}))
              .findFirst()
              .orElseThrow()
              .newInstance("x");
    } catch (ReflectiveOperationException e) {
      throw new AssertionError(e);
    }
  }
}
