package ai.spboucher.spbgit.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The gateway's packages depend on each other in one direction only: a cycle (say {@code jobs}
 * throwing an {@code http} exception while {@code http} routes to {@code jobs}) fails the build.
 * Dependencies are read from the main sources (imports and fully qualified names), so a reference
 * through a wildcard-free import or a qualified name in code both count.
 */
class PackageCycleTest {

  private static final String ROOT = "ai.spboucher.spbgit.gateway";
  private static final Path SOURCES = Path.of("src/main/java/ai/spboucher/spbgit/gateway");

  /**
   * A reference to a gateway type: the package (lower-case segments), then the type's capitalised
   * name.
   */
  private static final Pattern REFERENCE =
      Pattern.compile("\\b" + Pattern.quote(ROOT) + "((?:\\.[a-z][a-z0-9_]*)*)\\.[A-Z]");

  @Test
  void gatewayPackagesHaveNoCycle() {
    Map<String, Set<String>> uses = dependencies();
    assertTrue(uses.size() > 5, "found the gateway's packages: " + uses.keySet());
    List<String> cycles = new ArrayList<>();
    for (String from : uses.keySet()) {
      for (String to : uses.get(from)) {
        List<String> back = path(uses, to, from, new TreeSet<>());
        if (back != null && from.compareTo(to) < 0) {
          cycles.add(from + " -> " + String.join(" -> ", back));
        }
      }
    }
    assertEquals(List.of(), cycles, "package cycles in the gateway");
  }

  @Test
  void findsACycleWhereThereIsOne() {
    Map<String, Set<String>> uses =
        Map.of("a", Set.of("b"), "b", Set.of("c"), "c", Set.of("a"), "d", Set.of("a"));
    assertEquals(List.of("b", "c", "a"), path(uses, "b", "a", new TreeSet<>()));
    assertEquals(null, path(uses, "a", "d", new TreeSet<>()));
  }

  /** A path of dependencies from {@code from} to {@code to}, both included, or null. */
  private static List<String> path(
      Map<String, Set<String>> uses, String from, String to, Set<String> seen) {
    if (from.equals(to)) {
      return new ArrayList<>(List.of(to));
    }
    if (!seen.add(from)) {
      return null;
    }
    for (String next : uses.getOrDefault(from, Set.of())) {
      List<String> rest = path(uses, next, to, seen);
      if (rest != null) {
        rest.add(0, from);
        return rest;
      }
    }
    return null;
  }

  /**
   * Each gateway package (relative to the root, "" for the root) and the other gateway packages it
   * uses.
   */
  private static Map<String, Set<String>> dependencies() {
    Map<String, Set<String>> uses = new TreeMap<>();
    try (Stream<Path> files = Files.walk(SOURCES)) {
      files
          .filter(f -> f.toString().endsWith(".java"))
          .forEach(
              file -> {
                String from =
                    packageOf(SOURCES.relativize(file.getParent()).toString().replace('/', '.'));
                Set<String> targets = uses.computeIfAbsent(from, p -> new TreeSet<>());
                Matcher m = REFERENCE.matcher(read(file).replaceFirst("(?m)^package [^;]*;", ""));
                while (m.find()) {
                  String to = packageOf(m.group(1).isEmpty() ? "" : m.group(1).substring(1));
                  if (!to.equals(from)) {
                    targets.add(to);
                  }
                }
              });
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return uses;
  }

  private static String packageOf(String relative) {
    return relative.isEmpty() ? "(root)" : relative;
  }

  private static String read(Path file) {
    try {
      return Files.readString(file);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
