package ai.spboucher.spbgit.cli.commands;

import ai.spboucher.spbgit.cli.CliCommand;
import ai.spboucher.spbgit.cli.ExitCode;
import picocli.AutoComplete;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/** {@code spbgit completion bash}: prints the shell completion script. */
@Command(
    name = "completion",
    description = {
      "Print a completion script for bash (zsh runs it too, after 'autoload -U +X bashcompinit && "
          + "bashcompinit').",
      "Use: source <(spbgit completion bash), or save it as ~/.local/share/bash-completion/completions/spbgit."
    })
public final class CompletionCommand extends CliCommand {

  /** The shells the script supports. */
  enum Shell {
    bash,
    zsh
  }

  @Parameters(
      paramLabel = "<shell>",
      arity = "0..1",
      defaultValue = "bash",
      description = "${COMPLETION-CANDIDATES} (default: bash).")
  Shell shell;

  @Override
  public Integer call() {
    cli.out().print(AutoComplete.bash("spbgit", spec.root().commandLine()));
    cli.out().flush();
    return ExitCode.OK;
  }
}
