package ai.spboucher.spbgit.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.spboucher.spbgit.gateway.TestGateway;
import ai.spboucher.spbgit.testsupport.GitCli;
import ai.spboucher.spbgit.testsupport.NatsServer;
import io.vertx.core.json.JsonObject;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code spbgit agent comment} and the comments in {@code agent show}, as a process against a real
 * gateway, NATS and git: a line comment and a summary are added, a line the diff does not have is
 * the gateway's 400 in one line, and {@code show} lists them with their escape sequences stripped.
 */
class AgentCommentCommandIT {

  @TempDir Path tmp;

  @Test
  void commentsOnALineAndTheSummaryAndShowsThem() throws Exception {
    try (NatsServer nats = NatsServer.start(tmp.resolve("nats"));
        TestGateway gateway =
            TestGateway.start(
                tmp.resolve("data"),
                new JsonObject().put("natsUrl", nats.url()).put("model", "gpt-test"))) {
      long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
      while (gateway.api("GET", "/readyz", null, null).statusCode() != 200) {
        assertTrue(System.nanoTime() < deadline, "the gateway did not connect to NATS");
        Thread.sleep(100);
      }
      GitCli git = new GitCli(Files.createDirectories(tmp.resolve("git-home")));
      gateway.createRepo("demo");
      Path work = git.workTree(tmp, "demo");
      git.ok(work, "push", "-q", gateway.pushUrl("demo", gateway.ownerToken), "main");
      HttpResponse<String> created =
          gateway.api(
              "POST",
              "/api/v1/repos/demo/agent-jobs",
              gateway.ownerToken,
              new JsonObject().put("task", "Greet").encode());
      assertEquals(201, created.statusCode(), created.body());
      String id = new JsonObject(created.body()).getString("id");
      Files.writeString(work.resolve("README.md"), "hello demo\nhello agent\n");
      git.ok(work, "commit", "-q", "-am", "Greet\n\nAgent-Job: " + id);
      String proposal = git.ok(work, "rev-parse", "HEAD").output().strip();
      git.ok(
          work,
          "push",
          "-q",
          gateway.pushUrl("demo", gateway.ownerToken),
          "HEAD:refs/agents/" + id + "/proposal");
      CliProcess cli =
          new CliProcess(Files.createDirectories(tmp.resolve("home")))
              .gateway(gateway.baseUrl, gateway.ownerToken);

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
}
