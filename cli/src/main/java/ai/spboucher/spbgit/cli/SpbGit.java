package ai.spboucher.spbgit.cli;

import ai.spboucher.spbgit.cli.commands.AgentCommand;
import ai.spboucher.spbgit.cli.commands.AuditCommand;
import ai.spboucher.spbgit.cli.commands.CompletionCommand;
import ai.spboucher.spbgit.cli.commands.LoginCommand;
import ai.spboucher.spbgit.cli.commands.RepoCommand;
import ai.spboucher.spbgit.cli.commands.TokenCommand;
import ai.spboucher.spbgit.cli.text.AnsiFilter;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ScopeType;
import picocli.CommandLine.Spec;

/**
 * {@code spbgit}, the owner's command line: the root command, and the one place that turns failures
 * into a single {@code spbgit: <message>} line on stderr and an {@link ExitCode}.
 */
@Command(
    name = "spbgit",
    mixinStandardHelpOptions = true,
    versionProvider = SpbGit.Version.class,
    description =
        "The owner's command line for SPB Git: agent jobs (with live logs), repositories, tokens and "
            + "the audit log.",
    subcommands = {
      LoginCommand.class,
      AgentCommand.class,
      RepoCommand.class,
      TokenCommand.class,
      AuditCommand.class,
      CompletionCommand.class,
      CommandLine.HelpCommand.class
    },
    footerHeading = "%nConfiguration:%n",
    footer = {
      "  SPB_URL and SPB_TOKEN, or the file 'spbgit login' writes:",
      "  $XDG_CONFIG_HOME/spbgit/config.json (default ~/.config/spbgit/config.json).",
      "  The variables override the file. Docs: docs/cli.md"
    },
    exitCodeListHeading = "%nExit codes:%n",
    exitCodeList = {
      "0:success (agent run --follow, agent revise --follow, agent logs -f: the job ended ok)",
      "1:the job ended not ok, or the gateway refused the request",
      "2:bad arguments or configuration, or a confirmation that could not be asked",
      "3:not logged in, or the token was refused (401/403)",
      "4:not found (404)",
      "5:conflict with the current state (409)",
      "6:gateway unreachable or failing (5xx, connection refused, timeout)"
    })
public final class SpbGit implements Runnable {

  private final Cli cli;
  @Spec private CommandSpec spec;

  SpbGit(Cli cli) {
    this.cli = cli;
  }

  @Option(
      names = "--json",
      scope = ScopeType.INHERIT,
      description = "Print the gateway's JSON instead of text, for scripts.")
  void setJson(boolean json) {
    cli.setJson(json);
  }

  @Option(
      names = "--color",
      scope = ScopeType.INHERIT,
      paramLabel = "WHEN",
      description =
          "Colours in job logs: ${COMPLETION-CANDIDATES} (default: auto, only on a terminal and "
              + "without NO_COLOR). Other escape sequences from jobs are always removed.")
  void setColor(ColorMode color) {
    cli.setColor(color);
  }

  @Override
  public void run() {
    throw new CommandLine.ParameterException(spec.commandLine(), "a command is required");
  }

  public static void main(String[] args) {
    Cli cli = Cli.system();
    int code = run(cli, args);
    cli.out().flush();
    cli.err().flush();
    System.exit(code);
  }

  /**
   * Runs one command line and returns its exit code; everything the user sees goes to {@code cli}'s
   * streams.
   */
  public static int run(Cli cli, String... args) {
    return commandLine(cli).execute(args);
  }

  /** The configured picocli command tree (also used to print the completion script). */
  public static CommandLine commandLine(Cli cli) {
    CommandLine commandLine = new CommandLine(new SpbGit(cli), new Factory(cli));
    commandLine.setOut(cli.out());
    commandLine.setErr(cli.err());
    commandLine.setCaseInsensitiveEnumValuesAllowed(true);
    commandLine.setParameterExceptionHandler(
        (e, args) -> {
          String command = e.getCommandLine().getCommandSpec().qualifiedName();
          return fail(cli, ExitCode.USAGE, e.getMessage() + " (see '" + command + " --help')");
        });
    commandLine.setExecutionExceptionHandler(
        (e, cmd, parsed) ->
            e instanceof CliException failure
                ? fail(cli, failure.exitCode(), failure.getMessage())
                : fail(cli, ExitCode.FAILED, "unexpected error: " + e));
    return commandLine;
  }

  private static int fail(Cli cli, int exitCode, String message) {
    cli.out().flush();
    cli.err().println("spbgit: " + AnsiFilter.plain(message).strip());
    cli.err().flush();
    return exitCode;
  }

  /** Hands every {@link CliCommand} this run's {@link Cli}. */
  private static final class Factory implements CommandLine.IFactory {
    private final Cli cli;

    Factory(Cli cli) {
      this.cli = cli;
    }

    @Override
    public <K> K create(Class<K> type) throws Exception {
      K created = CommandLine.defaultFactory().create(type);
      if (created instanceof CliCommand command) {
        command.attach(cli);
      }
      return created;
    }
  }

  /** The version from the jar's manifest. */
  static final class Version implements CommandLine.IVersionProvider {
    @Override
    public String[] getVersion() {
      String version = SpbGit.class.getPackage().getImplementationVersion();
      return new String[] {"spbgit " + (version == null ? "(development build)" : version)};
    }
  }
}
