package ai.spboucher.spbgit.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.spboucher.spbgit.testsupport.GitCli;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Clone, fetch and push through the gateway with the real git CLI. */
class SmartHttpIT {

  @TempDir static Path tmp;
  static TestGateway gateway;
  static GitCli git;
  static Path work;

  @BeforeAll
  static void startGateway() throws Exception {
    gateway = TestGateway.start(tmp.resolve("data"));
    git = new GitCli(Files.createDirectories(tmp.resolve("home")));
    gateway.createRepo("demo");
    work = git.workTree(tmp, "work");
    git.ok(work, "push", gateway.pushUrl("demo", gateway.ownerToken), "main");
  }

  @AfterAll
  static void stopGateway() {
    gateway.close();
  }

  @Test
  void pushWithOwnerTokenUpdatesTheBranch() throws Exception {
    String head = git.ok(work, "rev-parse", "HEAD").output().strip();
    assertTrue(git.refs(gateway.repoDir("demo")).contains("refs/heads/main " + head));
  }

  @Test
  void clonesAnonymouslyWithProtocolV0AndV2() throws Exception {
    for (String version : new String[] {"0", "2"}) {
      Path clone = tmp.resolve("clone-v" + version);
      GitCli.Result r =
          git.run(
              tmp,
              Map.of("GIT_TRACE_PACKET", "1"),
              "-c",
              "protocol.version=" + version,
              "clone",
              gateway.repoUrl("demo"),
              clone.toString());
      assertEquals(0, r.exit(), r.output());
      assertEquals("hello work\n", Files.readString(clone.resolve("README.md")));
      assertEquals(
          "2".equals(version), r.output().contains("git< version 2"), "protocol v" + version);
    }
  }

  @Test
  void fetchesNewCommitsAnonymously() throws Exception {
    Path clone = tmp.resolve("fetcher");
    git.ok(tmp, "clone", "-q", gateway.repoUrl("demo"), clone.toString());
    Path writer = tmp.resolve("writer");
    git.ok(tmp, "clone", "-q", gateway.repoUrl("demo"), writer.toString());
    Files.writeString(writer.resolve("more.txt"), "more\n");
    git.ok(writer, "add", ".");
    git.ok(writer, "commit", "-q", "-m", "more");
    git.ok(
        writer,
        "push",
        "-q",
        gateway.pushUrl("demo", gateway.ownerToken),
        "HEAD:refs/heads/feature");
    git.ok(clone, "fetch", "-q", "origin");
    assertEquals(
        git.ok(writer, "rev-parse", "HEAD").output(),
        git.ok(clone, "rev-parse", "origin/feature").output());
  }

  @Test
  void refusesPushWithoutCredentials() throws Exception {
    String before = git.refs(gateway.repoDir("demo"));
    GitCli.Result r = git.run(work, "push", gateway.repoUrl("demo"), "main:refs/heads/anonymous");
    assertFalse(r.ok(), r.output());
    assertEquals(before, git.refs(gateway.repoDir("demo")));
  }

  @Test
  void challengesForBasicCredentialsOnPush() throws Exception {
    var response = gateway.api("GET", "/demo.git/info/refs?service=git-receive-pack", null, null);
    assertEquals(401, response.statusCode());
    assertEquals(
        "Basic realm=\"SPB Git\"", response.headers().firstValue("WWW-Authenticate").orElse(""));
  }

  @Test
  void refusesPushWithAnUnknownToken() throws Exception {
    String before = git.refs(gateway.repoDir("demo"));
    GitCli.Result r =
        git.run(work, "push", gateway.pushUrl("demo", "spbpat_notarealtoken"), "main:refs/heads/x");
    assertFalse(r.ok(), r.output());
    assertTrue(
        r.output().contains("Authentication failed") || r.output().contains("401"), r.output());
    assertEquals(before, git.refs(gateway.repoDir("demo")));
  }

  @Test
  void cloningAMissingRepositoryIsNotFound() throws Exception {
    GitCli.Result r =
        git.run(tmp, "clone", gateway.repoUrl("missing"), tmp.resolve("missing").toString());
    assertFalse(r.ok());
    assertTrue(r.output().contains("not found"), r.output());
  }
}
