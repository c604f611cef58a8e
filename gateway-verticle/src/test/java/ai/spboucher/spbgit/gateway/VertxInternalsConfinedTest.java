package ai.spboucher.spbgit.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.spboucher.spbgit.testsupport.VertxInternals;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Vert.x's internals ({@code impl} and {@code internal} packages) are used by the adapter {@code
 * gateway.http.OpenApiValidation} and by no other main class: an upgrade of Vert.x then has one
 * file to re-check.
 */
class VertxInternalsConfinedTest {

  private static final Path SOURCES = Path.of("src/main/java");

  /** The classes allowed to use Vert.x internals, by path below {@link #SOURCES}. */
  private static final Set<String> ADAPTERS =
      Set.of("ai/spboucher/spbgit/gateway/http/OpenApiValidation.java");

  @Test
  void onlyTheAdaptersUseVertxInternals() throws IOException {
    Set<String> users = VertxInternals.usersIn(SOURCES);
    assertTrue(users.containsAll(ADAPTERS), "the adapters found: " + users);
    users.removeAll(ADAPTERS);
    assertEquals(
        Set.of(),
        users,
        "main classes using Vert.x internals outside gateway.http.OpenApiValidation: go through it");
  }
}
