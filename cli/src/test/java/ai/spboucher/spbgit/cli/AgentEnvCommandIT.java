package ai.spboucher.spbgit.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.spboucher.spbgit.gateway.TestGateway;
import ai.spboucher.spbgit.testsupport.GitCli;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code spbgit agent env <repo>} as a process against a real gateway and real pushes: a good file
 * is printed field by field, a bad one is one line on stderr and exit 1, and {@code --json} is the
 * API's answer.
 */
class AgentEnvCommandIT {

  @TempDir static Path tmp;
  static TestGateway gateway;
  static GitCli git;

  @BeforeAll
  static void start() throws Exception {
    gateway = TestGateway.start(tmp.resolve("data"));
    git = new GitCli(Files.createDirectories(tmp.resolve("git-home")));
  }

  @AfterAll
  static void stop() {
    if (gateway != null) {
      gateway.close();
    }
  }

  private static CliProcess owner() throws Exception {
    return CliProcess.owner(tmp.resolve("home"), gateway);
  }

  private static void pushFile(String repo, String text) throws Exception {
    gateway.createRepo(repo);
    Path work = git.workTree(tmp, repo);
    Files.createDirectories(work.resolve(".spbgit"));
    Files.writeString(work.resolve(".spbgit/agent.yml"), text);
    git.commitAllAndPush(work, "environment", gateway.pushUrl(repo, gateway.ownerToken));
  }

  @Test
  void printsAGoodFileAndFailsInOneLineOnABadOne() throws Exception {
    pushFile(
        "node",
        "image: node\nsetup: npm ci\nsetup_egress: [registry.npmjs.org:443]\n"
            + "cache: [/work/node_modules]\ncache_key_files: [package-lock.json]\ntest: npm test\n");
    CliProcess.Result good = owner().run("agent", "env", "node");
    assertEquals(0, good.exit(), good.toString());
    assertTrue(good.out().startsWith("file:         .spbgit/agent.yml on main (blob "), good.out());
    assertTrue(
        good.out()
            .contains(
                "image:        node\nsetup:\n  npm ci\nsetup egress: registry.npmjs.org:443\n"),
        good.out());
    assertTrue(
        good.out().contains("cache keys:   package-lock.json\ntest:         npm test\n"),
        good.out());

    CliProcess.Result json = owner().run("agent", "env", "node", "--json");
    assertEquals(0, json.exit(), json.toString());
    assertEquals(
        "node", new ObjectMapper().readTree(json.out()).path("environment").path("image").asText());

    pushFile("broken", "image: node\ncache: [node_modules]\n");
    CliProcess.Result bad = owner().run("agent", "env", "broken");
    assertEquals(ExitCode.FAILED, bad.exit(), bad.toString());
    assertEquals("", bad.out());
    assertEquals(1, bad.err().strip().lines().count(), bad.err());
    assertTrue(
        bad.err()
            .startsWith(
                "spbgit: .spbgit/agent.yml line 2: 'cache' entry 'node_modules' must be an "
                    + "absolute path under /work"),
        bad.err());

    CliProcess.Result badJson = owner().run("agent", "env", "broken", "--json");
    assertEquals(ExitCode.FAILED, badJson.exit(), badJson.toString());
    assertEquals(2, new ObjectMapper().readTree(badJson.out()).path("line").asInt(), badJson.out());

    CliProcess.Result missing = owner().run("agent", "env", "nosuch");
    assertEquals(ExitCode.NOT_FOUND, missing.exit(), missing.toString());
  }
}
