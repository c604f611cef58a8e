package ai.spboucher.spbgit.testsupport;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Finds the main classes of a module that use Vert.x's internals ({@code impl} and {@code internal}
 * packages), for the source rule that only a module's one adapter may: an upgrade of Vert.x then
 * has one file per module to re-check. Blocking (reads the sources).
 */
public final class VertxInternals {

  /** A reference (import or qualified name) to a type in a Vert.x impl or internal package. */
  public static final Pattern REFERENCE =
      Pattern.compile("\\bio\\.vertx\\.(?:[a-z][a-z0-9_]*\\.)*(?:impl|internal)\\.");

  private VertxInternals() {}

  /** The Java files below {@code sources} that refer to Vert.x internals, by relative path. */
  public static Set<String> usersIn(Path sources) throws IOException {
    Set<String> users = new TreeSet<>();
    try (Stream<Path> files = Files.walk(sources)) {
      for (Path file : files.filter(f -> f.toString().endsWith(".java")).toList()) {
        if (REFERENCE.matcher(Files.readString(file)).find()) {
          users.add(sources.relativize(file).toString().replace('\\', '/'));
        }
      }
    }
    return users;
  }
}
