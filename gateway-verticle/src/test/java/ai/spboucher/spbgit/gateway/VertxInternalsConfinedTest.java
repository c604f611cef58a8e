package ai.spboucher.spbgit.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;
import java.util.stream.Stream;
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

  /** A reference (import or qualified name) to a type in a Vert.x impl or internal package. */
  static final Pattern INTERNAL =
      Pattern.compile("\\bio\\.vertx\\.(?:[a-z][a-z0-9_]*\\.)*(?:impl|internal)\\.");

  @Test
  void onlyTheAdaptersUseVertxInternals() throws IOException {
    Set<String> users = new TreeSet<>();
    try (Stream<Path> files = Files.walk(SOURCES)) {
      for (Path file : files.filter(f -> f.toString().endsWith(".java")).toList()) {
        String source = Files.readString(file);
        if (INTERNAL.matcher(source).find()) {
          users.add(SOURCES.relativize(file).toString().replace('\\', '/'));
        }
      }
    }
    assertTrue(users.containsAll(ADAPTERS), "the adapters found: " + users);
    users.removeAll(ADAPTERS);
    assertEquals(
        Set.of(),
        users,
        "main classes using Vert.x internals outside gateway.http.OpenApiValidation: go through it");
  }

  @Test
  void recognisesInternalReferences() {
    for (String internal :
        List.of(
            "import io.vertx.core.net.impl.ConnectionBase;",
            "import io.vertx.core.internal.net.NetSocketInternal;",
            "((io.vertx.core.internal.ContextInternal) context)",
            "import io.vertx.openapi.validation.impl.RequestValidatorImpl;")) {
      assertTrue(INTERNAL.matcher(internal).find(), internal);
    }
    for (String public_ :
        List.of(
            "import io.vertx.core.http.HttpConnection;",
            "import io.netty.channel.socket.DuplexChannel;",
            "import io.vertx.core.net.NetSocket;",
            "import ai.spboucher.spbgit.gateway.impl.Thing;")) {
      assertFalse(INTERNAL.matcher(public_).find(), public_);
    }
  }
}
