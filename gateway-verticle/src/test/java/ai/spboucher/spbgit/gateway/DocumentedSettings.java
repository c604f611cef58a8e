package ai.spboucher.spbgit.gateway;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The settings table under one heading of {@code docs/operations.md}, as an operator reads it: each
 * variable named in a row's first cell with that row's default cell (or, for {@code `A` / `B` | `1`
 * / `2`}, its own part of it, and for {@code `A` (30s)} the default written next to it). Lets a
 * config test check the code against the documentation instead of against a copy of it.
 */
public final class DocumentedSettings {

  private static final Path OPERATIONS = Path.of("..", "docs", "operations.md");
  private static final Pattern VARIABLE = Pattern.compile("`(SPB_[A-Z0-9_]+|DOCKER_HOST)`");
  private static final Pattern INLINE_DEFAULT =
      Pattern.compile("`(SPB_[A-Z0-9_]+)` \\(([^)\\s]+)\\)");
  private static final Pattern ONE_LITERAL = Pattern.compile("`([^`]+)`");

  private final Map<String, String> defaults;

  private DocumentedSettings(Map<String, String> defaults) {
    this.defaults = defaults;
  }

  /**
   * The table that follows {@code heading} (a whole line, e.g. {@code ### The gateway}) up to the
   * next heading.
   */
  public static DocumentedSettings under(String heading) throws IOException {
    List<String> lines = Files.readAllLines(OPERATIONS);
    int start = lines.indexOf(heading);
    if (start < 0) {
      throw new IllegalStateException(OPERATIONS + " has no heading '" + heading + "'");
    }
    Map<String, String> defaults = new LinkedHashMap<>();
    for (String line : lines.subList(start + 1, lines.size())) {
      if (line.startsWith("#")) {
        break;
      }
      String[] cells = line.split("(?<!\\\\)\\|");
      if (!line.startsWith("|")
          || cells.length < 4
          || cells[1].isBlank()
          || cells[1].startsWith("---")) {
        continue;
      }
      Matcher variable = VARIABLE.matcher(cells[1]);
      List<String> named = new java.util.ArrayList<>();
      while (variable.find()) {
        named.add(variable.group(1));
        defaults.put(variable.group(1), cells[2].strip());
      }
      // "`A` / `B` | `1` / `2`": one default each, in order.
      String[] listed = cells[2].strip().split(" / ");
      if (named.size() > 1
          && listed.length == named.size()
          && cells[1].strip().split(" / ").length == named.size()) {
        for (int i = 0; i < listed.length; i++) {
          defaults.put(named.get(i), listed[i].strip());
        }
      }
      // "`A` (30s)": a default written next to its variable.
      Matcher inline = INLINE_DEFAULT.matcher(cells[1]);
      while (inline.find()) {
        defaults.put(inline.group(1), "`" + inline.group(2) + "`");
      }
    }
    return new DocumentedSettings(defaults);
  }

  /** Every variable the table names. */
  public java.util.Set<String> variables() {
    return defaults.keySet();
  }

  /**
   * The documented default of {@code variable} when it is one literal in backticks (as {@code
   * `8080`} or {@code `2g`}); empty when the cell says more than that (a prose default such as
   * "host name").
   */
  public Optional<String> literalDefault(String variable) {
    Matcher literal = ONE_LITERAL.matcher(defaults.getOrDefault(variable, ""));
    return literal.matches() ? Optional.of(literal.group(1)) : Optional.empty();
  }
}
