package ai.spboucher.spbgit.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.spboucher.spbgit.gateway.TestGateway;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code spbgit login}, {@code repo}, {@code token} and the error contract, against a real gateway
 * (no jobs).
 */
class AdminCommandsIT {

  private static final ObjectMapper JSON = new ObjectMapper();

  @TempDir static Path tmp;
  static TestGateway gateway;

  @BeforeAll
  static void start() throws Exception {
    gateway = TestGateway.start(tmp.resolve("gateway"));
  }

  @AfterAll
  static void stop() {
    gateway.close();
  }

  private static CliProcess owner(String home) throws Exception {
    return CliProcess.owner(tmp.resolve(home), gateway);
  }

  private static void assertOneErrorLine(CliProcess.Result result, int exit, String contains) {
    assertEquals(exit, result.exit(), result.toString());
    assertEquals(1, result.errLines().size(), result.toString());
    assertTrue(
        result.err().startsWith("spbgit: ") && result.err().contains(contains), result.toString());
  }

  @Test
  void repoCreateListDelete() throws Exception {
    CliProcess cli = owner("repos");
    CliProcess.Result created = cli.run("repo", "create", "tools", "-d", "Useful tools");
    assertEquals(0, created.exit(), created.toString());
    assertTrue(
        created.out().contains("created tools: " + gateway.baseUrl + "/tools.git"), created.out());
    assertOneErrorLine(cli.run("repo", "create", "tools"), ExitCode.CONFLICT, "tools");

    CliProcess.Result list = cli.run("repo", "list");
    assertTrue(
        list.out().lines().anyMatch(l -> l.startsWith("tools ") && l.endsWith("Useful tools")),
        list.out());
    JsonNode json = JSON.readTree(cli.run("repo", "list", "--json").out());
    assertTrue(json.isArray() && json.findValuesAsText("name").contains("tools"), json.toString());

    assertOneErrorLine(cli.run("repo", "delete", "tools"), ExitCode.USAGE, "pass --yes");
    assertTrue(Files.isDirectory(gateway.repoDir("tools")), "not deleted without confirmation");
    CliProcess.Result deleted = cli.run("repo", "delete", "tools", "--yes");
    assertEquals(0, deleted.exit(), deleted.toString());
    assertFalse(Files.exists(gateway.repoDir("tools")));
    assertOneErrorLine(cli.run("repo", "delete", "tools", "--yes"), ExitCode.NOT_FOUND, "tools");
  }

  @Test
  void tokenCreateListRevoke() throws Exception {
    CliProcess cli = owner("tokens");
    CliProcess.Result created = cli.run("token", "create", "ci runner");
    assertEquals(0, created.exit(), created.toString());
    String secret = created.out().strip();
    assertEquals(
        1, created.out().lines().count(), "only the secret is on stdout: " + created.out());
    assertTrue(created.err().contains("ci runner"), created.err());

    CliProcess withNewToken = owner("tokens-new").gateway(gateway.baseUrl, secret);
    JsonNode tokens = JSON.readTree(withNewToken.run("token", "list", "--json").out());
    String id = null;
    for (JsonNode token : tokens) {
      assertFalse(token.has("token"), "a list never shows secrets");
      if ("ci runner".equals(token.path("label").asText())) {
        id = token.path("id").asText();
      }
    }
    assertTrue(id != null, tokens.toString());
    assertTrue(cli.run("token", "list").out().contains("ci runner"));

    CliProcess.Result revoked = cli.run("token", "revoke", id);
    assertEquals(0, revoked.exit(), revoked.toString());
    assertOneErrorLine(withNewToken.run("token", "list"), ExitCode.AUTH, "spbgit login");
    assertOneErrorLine(cli.run("token", "revoke", id), ExitCode.NOT_FOUND, id);
  }

  @Test
  void wrongTokenIsOneLineAndExitThree() throws Exception {
    CliProcess cli = owner("wrong").gateway(gateway.baseUrl, "spb_not_a_real_token");
    assertOneErrorLine(cli.run("agent", "list"), ExitCode.AUTH, "invalid or revoked token");
    assertOneErrorLine(cli.run("repo", "create", "x"), ExitCode.AUTH, "token");
  }

  @Test
  void badArgumentsAreOneLineAndExitTwo() throws Exception {
    CliProcess cli = owner("args");
    assertOneErrorLine(cli.run("agent", "run", "demo"), ExitCode.USAGE, "<task>");
    assertOneErrorLine(cli.run("repo", "list", "--nope"), ExitCode.USAGE, "--nope");
    assertOneErrorLine(cli.run("frobnicate"), ExitCode.USAGE, "frobnicate");
  }

  @Test
  void missingThingsAndAnUnreachableGatewayHaveTheirCodes() throws Exception {
    CliProcess cli = owner("codes");
    assertOneErrorLine(
        cli.run("agent", "show", "nosuchrepo", "nosuchjob"), ExitCode.NOT_FOUND, "nosuchjob");
    assertOneErrorLine(cli.run("agent", "list", "nosuchrepo"), ExitCode.NOT_FOUND, "nosuchrepo");
    assertOneErrorLine(
        cli.run("agent", "logs", "-f", "nosuchrepo", "nosuchjob"), ExitCode.NOT_FOUND, "nosuchjob");
    int closedPort;
    try (ServerSocket socket = new ServerSocket(0)) {
      closedPort = socket.getLocalPort();
    }
    assertOneErrorLine(
        cli.gateway("http://127.0.0.1:" + closedPort, "t").run("repo", "list"),
        ExitCode.UNAVAILABLE,
        "connection refused");
    assertOneErrorLine(
        owner("none").gateway(null, null).run("repo", "list"), ExitCode.AUTH, "spbgit login");
  }

  @Test
  void loginChecksTheTokenAndWritesAPrivateConfigFile() throws Exception {
    Path home = Files.createDirectories(tmp.resolve("login"));
    CliProcess cli = new CliProcess(home);
    assertOneErrorLine(
        cli.runWithInput("wrong-token\n", "login", "--url", gateway.baseUrl),
        ExitCode.AUTH,
        "invalid or revoked token");
    Path config = home.resolve(".config/spbgit/config.json");
    assertFalse(Files.exists(config), "nothing is saved for a refused token");

    CliProcess.Result login =
        cli.runWithInput(gateway.ownerToken + "\n", "login", "--url", gateway.baseUrl + "/");
    assertEquals(0, login.exit(), login.toString());
    assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(config)));
    JsonNode saved = JSON.readTree(config.toFile());
    assertEquals(gateway.baseUrl, saved.path("url").asText());

    CliProcess.Result list = cli.run("token", "list");
    assertEquals(0, list.exit(), "the saved config is used: " + list);
    assertOneErrorLine(
        cli.set("SPB_TOKEN", "overridden").run("token", "list"), ExitCode.AUTH, "token");
  }
}
