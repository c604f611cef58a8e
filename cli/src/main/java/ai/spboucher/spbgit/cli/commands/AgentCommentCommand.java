package ai.spboucher.spbgit.cli.commands;

import ai.spboucher.spbgit.cli.CliException;
import ai.spboucher.spbgit.cli.ExitCode;
import ai.spboucher.spbgit.cli.api.ApiClient;
import ai.spboucher.spbgit.cli.text.AnsiFilter;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code spbgit agent comment <repo> <job> "<text>" [--file F --line N [--old]]}: a review comment
 * on the job's proposal.
 */
@Command(
    name = "comment",
    description = {
      "Comment on a job's proposal (or its partial work): on a line of its diff with --file and --line, "
          + "else the summary comment.",
      "The gateway refuses a line its diff does not show (exit 1), more than 8 KiB of text, and a job with "
          + "nothing to comment on yet (exit 5)."
    })
final class AgentCommentCommand extends JobCommand {

  @Parameters(index = "2", paramLabel = "<text>", description = "The comment.")
  String text;

  @Option(names = "--file", paramLabel = "F", description = "The file, as the diff names it.")
  String file;

  @Option(names = "--line", paramLabel = "N", description = "The line number in the diff.")
  Integer line;

  @Option(
      names = "--old",
      description = "--line is on the old side (a deleted line); the new side by default.")
  boolean old;

  @Override
  void check() {
    if ((file == null) != (line == null) || (old && file == null)) {
      throw new CliException(
          ExitCode.USAGE, "--file and --line go together (--old with them); neither for a summary");
    }
  }

  @Override
  int run(ApiClient api) {
    ObjectNode body = ApiClient.JSON.createObjectNode().put("body", text);
    if (file != null) {
      body.put("path", file).put("line", line).put("side", old ? "old" : "new");
    }
    JsonNode comment = api.post(path() + "/comments", body);
    return print(
        comment,
        () ->
            "comment "
                + comment.path("id").asText()
                + " on "
                + AnsiFilter.plain(placeOf(comment))
                + " of "
                + AnsiFilter.plain(comment.path("commit").asText()));
  }

  /** "README.md:2 (new)", or "the summary" for a comment on no line. */
  static String placeOf(JsonNode comment) {
    return comment.path("path").isTextual()
        ? comment.path("path").asText()
            + ":"
            + comment.path("line").asText()
            + " ("
            + comment.path("side").asText()
            + ")"
        : "the summary";
  }
}
