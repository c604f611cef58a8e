package ai.spboucher.spbgit.cli.commands;

import ai.spboucher.spbgit.cli.ExitCode;
import ai.spboucher.spbgit.cli.api.ApiClient;
import ai.spboucher.spbgit.cli.text.Table;
import ai.spboucher.spbgit.proto.AuditChain;
import com.fasterxml.jackson.databind.JsonNode;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Set;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code spbgit audit [--repo R] [--job J] [--verify]}: the gateway's agent-job audit log. */
@Command(
    name = "audit",
    description = {
      "Print the agent-job audit log (oldest first), or check its hash chain with --verify.",
      "--verify checks the stored lines the API serves: seq without gaps (for the whole log) and every "
          + "entry's prev against the SHA-256 of the line before it; exit 1 if broken. "
          + "With --repo or --job only adjacent entries can be linked. The authoritative check reads the "
          + "file on the gateway's host: java -jar spb-gateway.jar audit verify."
    })
public final class AuditCommand extends ApiCommand {

  private static final Set<String> SHOWN = Set.of("seq", "ts", "prev", "event", "job", "repo");
  private static final int VALUE_WIDTH = 60;

  @Option(names = "--repo", paramLabel = "R", description = "Only entries about this repository.")
  String repo;

  @Option(names = "--job", paramLabel = "J", description = "Only entries about this job.")
  String job;

  @Option(names = "--verify", description = "Check seq continuity and the prev hash chain.")
  boolean verify;

  @Override
  int run(ApiClient api) {
    StringBuilder path = new StringBuilder("/api/v1/agent-jobs");
    if (repo != null || job != null) {
      path.append('?');
      if (repo != null) {
        path.append("repo=").append(ApiClient.query(repo)).append(job != null ? "&" : "");
      }
      if (job != null) {
        path.append("job=").append(ApiClient.query(job));
      }
    }
    if (verify) {
      path.append(path.indexOf("?") < 0 ? '?' : '&').append("format=lines");
      return verify(api.getText(path.toString()));
    }
    return printTable(
        api.get(path.toString()),
        new Table("SEQ", "TIME", "EVENT", "JOB", "REPO", "DETAILS"),
        entry ->
            new Object[] {
              entry.path("seq").asText(),
              entry.path("ts").asText(),
              entry.path("event").asText(),
              entry.path("job").asText("-"),
              entry.path("repo").asText("-"),
              details(entry)
            });
  }

  /** Checks the stored lines themselves: the hash of each is what the next one's prev must be. */
  private int verify(String storedLines) {
    List<byte[]> lines = AuditChain.completeLines(storedLines.getBytes(StandardCharsets.UTF_8));
    AuditChain.Result result = AuditChain.checkServed(lines, repo == null && job == null);
    if (cli.json()) {
      cli.printJson(
          ApiClient.JSON
              .createObjectNode()
              .put("ok", result.ok())
              .put("entries", result.lines())
              .put("links_checked", result.linksChecked())
              .put("problem", result.problem()));
    } else if (result.ok()) {
      cli.out()
          .println(
              result.lines()
                  + " entries, "
                  + result.linksChecked()
                  + " hash links checked: intact"
                  + (repo == null && job == null
                      ? " (seq 1.." + result.lines() + " without gaps)"
                      : ""));
    } else {
      cli.out().println("BROKEN: " + result.problem());
    }
    return result.ok() ? ExitCode.OK : ExitCode.FAILED;
  }

  private static String details(JsonNode entry) {
    StringBuilder details = new StringBuilder();
    entry
        .fields()
        .forEachRemaining(
            field -> {
              JsonNode value = field.getValue();
              if (SHOWN.contains(field.getKey())
                  || value.isNull()
                  || (value.isTextual() && value.asText().isEmpty())) {
                return;
              }
              String text = value.isTextual() ? value.asText() : value.toString();
              if (text.length() > VALUE_WIDTH) {
                text = text.substring(0, VALUE_WIDTH - 1) + "…";
              }
              details
                  .append(details.length() == 0 ? "" : " ")
                  .append(field.getKey())
                  .append('=')
                  .append(text);
            });
    return details.toString();
  }
}
