package ai.spboucher.spbgit.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.InputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** Argument parsing and the one-line error contract, without a gateway. */
class SpbGitTest {

  @TempDir Path home;

  private Map<String, String> noConfig() {
    return Map.of("HOME", home.toString(), "XDG_CONFIG_HOME", home.resolve("config").toString());
  }

  /** A run's context whose output goes nowhere, stdin not a terminal. */
  private static Cli silentCli(Map<String, String> env, boolean stdoutTerminal) {
    return new Cli(
        env,
        new PrintWriter(new StringWriter()),
        new PrintWriter(new StringWriter()),
        InputStream.nullInputStream(),
        false,
        stdoutTerminal);
  }

  private void assertOneErrorLine(CliRun run, int exit, String contains) {
    assertEquals(exit, run.exit(), run.err());
    assertEquals(1, run.errLines().size(), run.err());
    assertTrue(run.err().startsWith("spbgit: "), run.err());
    assertTrue(run.err().contains(contains), run.err());
  }

  @Test
  void noCommandIsAUsageError() {
    assertOneErrorLine(
        CliRun.of(noConfig(), "", new String[0]), ExitCode.USAGE, "a command is required");
  }

  @Test
  void unknownOptionIsOneLineAndExitTwo() {
    assertOneErrorLine(
        CliRun.of(noConfig(), "", "agent", "run", "demo", "task", "--bogus"),
        ExitCode.USAGE,
        "Unknown option: '--bogus'");
  }

  @Test
  void missingParametersNameThemAndTheHelpCommand() {
    assertOneErrorLine(
        CliRun.of(noConfig(), "", "agent", "approve", "demo"),
        ExitCode.USAGE,
        "spbgit agent approve --help");
  }

  @Test
  void groupWithoutSubcommandIsAUsageError() {
    assertOneErrorLine(
        CliRun.of(noConfig(), "", "token"), ExitCode.USAGE, "Missing required subcommand");
  }

  @Test
  void badColorValueIsAUsageError() {
    assertOneErrorLine(
        CliRun.of(noConfig(), "", "--color=sometimes", "agent", "list"), ExitCode.USAGE, "--color");
  }

  @Test
  void agentWithExecIsAUsageError() {
    assertOneErrorLine(
        CliRun.of(
            noConfig(), "", "agent", "run", "demo", "t", "--exec", "true", "--agent", "codex"),
        ExitCode.USAGE,
        "--agent applies to llm jobs only");
  }

  @Test
  void helpGoesToStdoutWithTheExitCodes() {
    CliRun run = CliRun.of(noConfig(), "", "--help");
    assertEquals(0, run.exit());
    assertTrue(run.out().contains("Exit codes:"), run.out());
    assertTrue(run.out().contains("6   gateway unreachable"), run.out());
    assertEquals("", run.err());
  }

  @Test
  void withoutConfigurationCommandsSayHowToLogIn() {
    assertOneErrorLine(CliRun.of(noConfig(), "", "agent", "list"), ExitCode.AUTH, "spbgit login");
  }

  @Test
  void deleteRefsRefusesWithoutYesWhenStdinIsNotATerminal() {
    assertOneErrorLine(
        CliRun.of(noConfig(), "y\n", "agent", "delete-refs", "demo", "job-1"),
        ExitCode.USAGE,
        "pass --yes");
  }

  @Test
  void onATerminalDeleteRefsAsksAndStopsUnlessTheAnswerIsYes() {
    CliRun declined = CliRun.of(true, noConfig(), "n\n", "agent", "delete-refs", "demo", "job-1");
    assertTrue(
        declined.err().startsWith("Delete refs/agents/job-1/* in demo? [y/N] "), declined.err());
    assertEquals(ExitCode.FAILED, declined.exit());
    assertTrue(
        declined.err().endsWith("spbgit: not confirmed; nothing was changed\n"), declined.err());
    // Confirmed, it goes on to the gateway, which is not configured here.
    assertEquals(
        ExitCode.AUTH,
        CliRun.of(true, noConfig(), "yes\n", "agent", "delete-refs", "demo", "job-1").exit());
  }

  @Test
  void repoDeleteRefusesWithoutYesWhenStdinIsNotATerminal() {
    assertOneErrorLine(
        CliRun.of(noConfig(), "", "repo", "delete", "demo"), ExitCode.USAGE, "pass --yes");
  }

  @Test
  void loginWithoutUrlOffATerminalIsAUsageError() {
    assertOneErrorLine(
        CliRun.of(noConfig(), "token\n", "login"), ExitCode.USAGE, "--url is required");
  }

  @Test
  void loginRejectsANonHttpUrl() {
    assertOneErrorLine(
        CliRun.of(noConfig(), "token\n", "login", "--url", "ftp://example.org"),
        ExitCode.USAGE,
        "http(s)://");
  }

  @Test
  void jsonAndColorAreAcceptedBeforeOrAfterTheCommand() {
    for (String[] args :
        new String[][] {
          {"--json", "agent", "list"}, {"agent", "list", "--json"}, {"agent", "--json", "list"}
        }) {
      Cli cli = silentCli(noConfig(), true);
      SpbGit.commandLine(cli).parseArgs(args);
      assertTrue(cli.json(), String.join(" ", args));
    }
    Cli cli = silentCli(noConfig(), false);
    SpbGit.commandLine(cli).parseArgs("agent", "logs", "demo", "id", "--color", "ALWAYS");
    assertTrue(cli.keepColours());
  }

  @Test
  void runAcceptsEveryJobOption() {
    CommandLine commandLine = SpbGit.commandLine(silentCli(noConfig(), false));
    CommandLine.ParseResult parsed =
        commandLine.parseArgs(
            "agent",
            "run",
            "demo",
            "Add a greeting",
            "--exec",
            "echo hi > g.txt",
            "--test",
            "test -f g.txt",
            "--base",
            "dev",
            "-f");
    CommandLine.ParseResult run = parsed.subcommand().subcommand();
    assertEquals("run", run.commandSpec().name());
    assertEquals("Add a greeting", run.matchedPositional(1).getValue());
    assertEquals("echo hi > g.txt", run.matchedOptionValue("--exec", null));
    assertEquals("dev", run.matchedOptionValue("--base", null));
    CommandLine.ParseResult llm =
        commandLine
            .parseArgs("agent", "run", "demo", "Refactor", "--model", "m1")
            .subcommand()
            .subcommand();
    assertEquals("m1", llm.matchedOptionValue("--model", null));
    assertTrue(run.hasMatchedOption("--follow"));
  }

  @Test
  void coloursFollowTheTerminalUnlessNoColorIsSet() {
    assertTrue(silentCli(Map.of(), true).keepColours());
    assertFalse(silentCli(Map.of(), false).keepColours());
    assertFalse(silentCli(Map.of("NO_COLOR", "1"), true).keepColours());
  }

  @Test
  void completionPrintsABashScript() {
    CliRun run = CliRun.of(noConfig(), "", "completion", "bash");
    assertEquals(0, run.exit(), run.err());
    assertTrue(run.out().contains("complete -F"), run.out());
    assertTrue(run.out().contains("delete-refs"), "subcommands are completed");
  }
}
