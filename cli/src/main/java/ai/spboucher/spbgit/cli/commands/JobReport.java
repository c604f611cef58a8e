package ai.spboucher.spbgit.cli.commands;

import ai.spboucher.spbgit.cli.Cli;
import ai.spboucher.spbgit.cli.CliException;
import ai.spboucher.spbgit.cli.ExitCode;
import ai.spboucher.spbgit.cli.api.ApiClient;
import ai.spboucher.spbgit.cli.api.ApiException;
import ai.spboucher.spbgit.cli.api.LogSocketClient;
import ai.spboucher.spbgit.cli.text.AnsiFilter;
import ai.spboucher.spbgit.cli.text.DiffStatFormatter;
import com.fasterxml.jackson.databind.JsonNode;
import java.io.PrintWriter;
import java.time.Duration;

/**
 * Follows a job's live log to the terminal and ends with its outcome: the exit reason, the review
 * page and the diff stat of its proposal. Shared by {@code agent run --follow} and {@code agent
 * logs -f}.
 */
final class JobReport {

  /**
   * How long the log stream may stay unreachable (a gateway restart, a network drop) before giving
   * up.
   */
  static final Duration RESUME_LIMIT = Duration.ofMinutes(2);

  /**
   * How long the gateway may take to record an end the runner already announced on the log stream.
   */
  private static final Duration RECORD_LIMIT = Duration.ofSeconds(15);

  private JobReport() {}

  /**
   * What {@code agent run} and {@code agent revise} print for the job they created: its id and
   * status, the review page and how to follow it; or, with {@code follow}, its log to the end (see
   * {@link #follow}).
   */
  static int started(Cli cli, String repo, JsonNode job, boolean follow)
      throws InterruptedException {
    String id = job.path("id").asText();
    if (follow) {
      cli.err()
          .println(
              "job "
                  + AnsiFilter.plain(id)
                  + " "
                  + AnsiFilter.plain(job.path("status").asText())
                  + "; following its log (Ctrl-C stops following, not the job)");
      cli.err().flush();
      return follow(cli, repo, id);
    }
    if (cli.json()) {
      cli.printJson(job);
    } else {
      cli.out()
          .println(
              "job " + AnsiFilter.plain(id) + " " + AnsiFilter.plain(job.path("status").asText()));
      if (job.path("revises").isTextual()) {
        cli.out().println("revision " + revisionLink(job));
      }
      cli.out().println("review: " + cli.api().jobPageUrl(repo, id));
      cli.out().println("follow: spbgit agent logs -f " + repo + " " + AnsiFilter.plain(id));
    }
    return ExitCode.OK;
  }

  /**
   * Streams the log from the start, reports the outcome; {@link ExitCode#OK} only for an {@code ok}
   * job.
   */
  static int follow(Cli cli, String repo, String id) throws InterruptedException {
    // With --json, stdout carries only the final job JSON; the log goes to stderr.
    PrintWriter log = cli.json() ? cli.err() : cli.out();
    AnsiFilter filter = new AnsiFilter(!cli.json() && cli.keepColours());
    boolean[] atLineStart = {true};
    LogSocketClient.End end =
        new LogSocketClient(cli.api(), repo, id, RESUME_LIMIT)
            .follow(
                0,
                (stream, data) -> {
                  String text = filter.filter(data);
                  if (!text.isEmpty()) {
                    log.print(text);
                    atLineStart[0] = text.endsWith("\n");
                  }
                  log.flush();
                });
    log.print(filter.finish());
    if (!atLineStart[0]) {
      log.println();
    }
    log.flush();
    JsonNode job = awaitRecorded(cli.api(), repo, id);
    if (cli.json()) {
      cli.printJson(job);
    } else {
      printOutcome(cli, job);
    }
    String reason =
        job.path("exit_reason").isTextual() ? job.path("exit_reason").asText() : end.exitReason();
    return "ok".equals(reason) ? ExitCode.OK : ExitCode.FAILED;
  }

  /**
   * The exit reason, the review page and, when there is a proposal (or, failing that, partial work
   * from a job a limit stopped), its diff stat.
   */
  static void printOutcome(Cli cli, JsonNode job) {
    PrintWriter out = cli.out();
    String id = job.path("id").asText();
    String repo = job.path("repo").asText();
    out.println("job " + AnsiFilter.plain(id) + " " + statusLine(job));
    out.println("review: " + cli.api().jobPageUrl(repo, id));
    if (job.path("proposal_sha").isTextual()) {
      out.println(
          "proposal: refs/agents/"
              + AnsiFilter.plain(id)
              + "/proposal at "
              + job.path("proposal_sha").asText());
      printDiffStat(cli, repo, id, "");
      printRevisionStat(cli, job, "?scope=revision");
    } else if (job.path("partial_sha").isTextual()) {
      // A job stopped by a limit pushed what it had: worth a look, never an approval.
      out.println(
          "partial work (for review only, cannot be approved): refs/agents/"
              + AnsiFilter.plain(id)
              + "/partial at "
              + AnsiFilter.plain(job.path("partial_sha").asText()));
      printDiffStat(cli, repo, id, "?ref=partial");
      printRevisionStat(cli, job, "?ref=partial&scope=revision");
    } else if (job.path("status").asText().equals("finished")) {
      out.println(
          "no proposal" + ("ok".equals(job.path("exit_reason").asText()) ? " (no changes)" : ""));
    }
    out.flush();
  }

  /** {@code 2, revises <id>'s proposal}: where a revision stands in its chain. */
  static String revisionLink(JsonNode job) {
    return job.path("revision").asInt()
        + ", revises "
        + AnsiFilter.plain(job.path("revises").asText())
        + "'s "
        + AnsiFilter.plain(job.path("revises_work").asText("proposal"));
  }

  /** {@code finished: ok (tests passed)}, {@code started}, ... */
  static String statusLine(JsonNode job) {
    String status = job.path("status").asText();
    if (!"finished".equals(status)) {
      return AnsiFilter.plain(status);
    }
    StringBuilder line =
        new StringBuilder("finished: ").append(AnsiFilter.plain(job.path("exit_reason").asText()));
    if (job.path("test_result").isTextual()) {
      line.append(" (tests ")
          .append(AnsiFilter.plain(job.path("test_result").asText()))
          .append(')');
    }
    String detail = job.path("detail").asText("");
    if (!detail.isBlank() && !"ok".equals(job.path("exit_reason").asText())) {
      line.append(": ").append(AnsiFilter.plain(detail));
    }
    return line.toString();
  }

  /**
   * For a revision, what it changed itself on top of the work it revised (the stat above is the
   * whole chain's, what approving brings).
   */
  private static void printRevisionStat(Cli cli, JsonNode job, String query) {
    if (job.path("revision").asInt(1) < 2) {
      return;
    }
    cli.out()
        .println(
            "this revision alone, on top of "
                + AnsiFilter.plain(job.path("revises").asText())
                + "'s "
                + AnsiFilter.plain(job.path("revises_work").asText("proposal"))
                + ":");
    printDiffStat(cli, job.path("repo").asText(), job.path("id").asText(), query);
  }

  private static void printDiffStat(Cli cli, String repo, String id, String query) {
    try {
      cli.out()
          .print(
              DiffStatFormatter.render(
                  cli.api().get(ApiClient.jobPath(repo, id) + "/diff" + query)));
    } catch (ApiException e) {
      if (e.status() != 404) {
        throw e;
      }
      // The proposal ref went away between the two requests: nothing to show.
    }
  }

  /**
   * The job as the gateway records it once finished. The end frame comes from the runner's event,
   * which the gateway records in its audit log a moment later; until then the job still shows its
   * earlier status.
   */
  private static JsonNode awaitRecorded(ApiClient api, String repo, String id)
      throws InterruptedException {
    long deadline = System.nanoTime() + RECORD_LIMIT.toNanos();
    while (true) {
      JsonNode job = api.get(ApiClient.jobPath(repo, id));
      if ("finished".equals(job.path("status").asText()) || System.nanoTime() > deadline) {
        return job;
      }
      Thread.sleep(200);
    }
  }

  /** Fails unless {@code node} is a JSON object, for answers the commands read fields from. */
  static JsonNode requireObject(JsonNode node, String what) {
    if (node == null || !node.isObject()) {
      throw new CliException(
          ExitCode.UNAVAILABLE, "the gateway answered " + what + " without a JSON object");
    }
    return node;
  }
}
