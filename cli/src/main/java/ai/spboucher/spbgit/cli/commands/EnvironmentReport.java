package ai.spboucher.spbgit.cli.commands;

import ai.spboucher.spbgit.cli.text.AnsiFilter;
import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;

/**
 * A repository's job environment as the terminal shows it, from {@code GET .../agent-environment}
 * or a job's {@code environment}. Every value comes from a repository file, so each passes through
 * {@link AnsiFilter}: no escape sequence of the file reaches the owner's terminal.
 */
final class EnvironmentReport {

  private EnvironmentReport() {}

  /**
   * The lines of {@code spbgit agent env}: where the file was read from, then each parsed field.
   */
  static List<String> lines(JsonNode answer) {
    List<String> lines = new ArrayList<>();
    String branch = answer.path("branch").asText("?");
    lines.add(
        field(
            "file",
            answer.path("blob").isTextual()
                ? answer.path("path").asText()
                    + " on "
                    + branch
                    + " (blob "
                    + answer.path("blob").asText()
                    + ")"
                : "none on " + branch + ": the defaults"));
    JsonNode env = answer.path("environment");
    lines.add(field("image", env.path("image").asText("base")));
    String setup = env.path("setup").asText("");
    if (setup.isEmpty()) {
      lines.add(field("setup", "none"));
    } else {
      // The script line by line, indented: each line filtered alone, so its newlines stay.
      lines.add("setup:");
      setup.stripTrailing().lines().forEach(line -> lines.add("  " + AnsiFilter.plain(line)));
    }
    lines.add(field("setup egress", list(env.path("setup_egress"))));
    lines.add(field("egress", list(env.path("egress"))));
    lines.add(field("cache", list(env.path("cache"))));
    lines.add(field("cache keys", list(env.path("cache_key_files"))));
    lines.add(
        field("test", env.path("test").asText("").isEmpty() ? "none" : env.path("test").asText()));
    lines.add(field("hash", env.path("hash").asText("")));
    return lines;
  }

  /**
   * The one line of a file that cannot be used, e.g. {@code .spbgit/agent.yml line 3:
   * 'setup_egress' must be a list (on main, blob 1a2b...)}; null when the answer has no error.
   */
  static String error(JsonNode answer) {
    if (!answer.path("error").isTextual()) {
      return null;
    }
    return AnsiFilter.plain(answer.path("error").asText())
        + " (on "
        + AnsiFilter.plain(answer.path("branch").asText("?"))
        + ", blob "
        + AnsiFilter.plain(answer.path("blob").asText("?"))
        + ")";
  }

  /**
   * The one line {@code spbgit agent show} prints for a job's environment and how its start went.
   */
  static String summary(JsonNode job) {
    JsonNode env = job.path("environment");
    StringBuilder line =
        new StringBuilder(env.isObject() ? env.path("image").asText("base") : "base");
    if (job.path("image_digest").isTextual()) {
      line.append(" (").append(job.path("image_digest").asText()).append(')');
    }
    line.append(", cache ")
        .append(job.path("cache").isTextual() ? job.path("cache").asText() : "-");
    if (env.isObject() && env.path("hash").isTextual()) {
      line.append(", hash ")
          .append(env.path("hash").asText(), 0, Math.min(12, env.path("hash").asText().length()));
    }
    return AnsiFilter.plain(line.toString());
  }

  private static String list(JsonNode array) {
    List<String> items = new ArrayList<>();
    array.forEach(item -> items.add(item.asText()));
    return items.isEmpty() ? "none" : String.join(", ", items);
  }

  private static String field(String name, String value) {
    return String.format("%-13s %s", name + ":", AnsiFilter.plain(value));
  }
}
