package ai.spboucher.spbgit.common;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * A rule the formatter cannot enforce, checked over every module's main sources (from here, the
 * repository's root is one level up): types are imported, never written with their package inline
 * in code, so a reader sees a file's dependencies in its imports. Comments and string literals are
 * left alone.
 */
class MainSourcesTest {

  private static final Pattern INLINE_NAME =
      Pattern.compile(
          "(?<![\\w.])(?:java|javax|io|org|com|ai)(?:\\.[a-z_][a-z0-9_]*)+\\.[A-Z]\\w*");

  @Test
  void mainCodeWritesNoFullyQualifiedTypeName() throws IOException {
    List<String> found = new ArrayList<>();
    int files = 0;
    try (Stream<Path> paths = Files.walk(Path.of(".."))) {
      for (Path file : paths.filter(MainSourcesTest::isMainSource).toList()) {
        files++;
        List<String> lines = Files.readAllLines(file);
        boolean inComment = false;
        for (int i = 0; i < lines.size(); i++) {
          String line = lines.get(i).strip();
          if (inComment || line.startsWith("/*") || line.startsWith("*")) {
            inComment = !line.contains("*/") && (inComment || line.startsWith("/*"));
            continue;
          }
          if (line.startsWith("import ") || line.startsWith("package ")) {
            continue;
          }
          Matcher name = INLINE_NAME.matcher(codeOf(line));
          if (name.find()) {
            found.add(file + ":" + (i + 1) + ": " + name.group());
          }
        }
      }
    }
    assertTrue(files > 100, "read only " + files + " main source files");
    assertEquals(List.of(), found, "import these instead");
  }

  private static boolean isMainSource(Path path) {
    String text = path.toString();
    return text.endsWith(".java") && text.contains("/src/main/java/") && !text.contains("/target/");
  }

  /** The line without its trailing comment and without the contents of its string literals. */
  private static String codeOf(String line) {
    StringBuilder code = new StringBuilder();
    boolean inString = false;
    for (int i = 0; i < line.length(); i++) {
      char c = line.charAt(i);
      if (inString) {
        if (c == '\\') {
          i++;
        } else if (c == '"') {
          inString = false;
          code.append(c);
        }
        continue;
      }
      if (c == '"') {
        inString = true;
      } else if (c == '/' && i + 1 < line.length() && line.charAt(i + 1) == '/') {
        break;
      }
      code.append(c);
    }
    return code.toString();
  }
}
