package ai.spboucher.spbgit.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.json.JsonObject;
import java.nio.file.Files;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code spbgit agent comment} and the comments in {@code agent show}, as a process against a real
 * gateway, NATS and git: a line comment and a summary are added, a line the diff does not have is
 * the gateway's 400 in one line, and {@code show} lists them with their escape sequences stripped.
 */
class AgentCommentCommandIT {

  @RegisterExtension static final GatewayOnNats bed = new GatewayOnNats();

  @Test
  void commentsOnALineAndTheSummaryAndShowsThem() throws Exception {
    String id = bed.createJob(new JsonObject().put("task", "Greet"));
    Files.writeString(bed.work.resolve("README.md"), "hello demo\nhello agent\n");
    String proposal = bed.pushProposal(id, "Greet", bed.gateway.ownerToken);
    CliProcess cli = bed.owner();

    CliProcess.Result onLine =
        cli.run(
            "agent",
            "comment",
            "demo",
            id,
            "Say hello to the owner",
            "--file",
            "README.md",
            "--line",
            "2");
    assertEquals(0, onLine.exit(), onLine.toString());
    assertTrue(
        onLine.out().strip().endsWith(" on README.md:2 (new) of " + proposal), onLine.toString());
    CliProcess.Result summary =
        cli.run("agent", "comment", "demo", id, "Close \u001b[31mbut\u001b[0m not yet");
    assertEquals(0, summary.exit(), summary.toString());
    assertTrue(summary.out().contains(" on the summary of "), summary.toString());

    CliProcess.Result missing =
        cli.run("agent", "comment", "demo", id, "here?", "--file", "README.md", "--line", "9");
    assertEquals(ExitCode.FAILED, missing.exit(), missing.toString());
    assertTrue(
        missing.err().contains("the diff of 'README.md' shows no line 9 on its new side"),
        missing.toString());
    CliProcess.Result half = cli.run("agent", "comment", "demo", id, "x", "--line", "2");
    assertEquals(ExitCode.USAGE, half.exit(), half.toString());

    CliProcess.Result show = cli.run("agent", "show", "demo", id);
    assertEquals(0, show.exit(), show.toString());
    assertTrue(
        show.out().contains("comment:  README.md:2 (new): Say hello to the owner"),
        show.toString());
    assertTrue(show.out().contains("comment:  the summary: Close but not yet"), show.toString());
    assertFalse(show.out().contains("\u001b"), "escape sequences are stripped");
  }
}
