package ai.spboucher.spbgit.cli.commands;

import ai.spboucher.spbgit.cli.Cli;
import picocli.AutoComplete;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code spbgit completion bash}: prints the shell completion script. */
@Command(
    name = "completion",
    mixinStandardHelpOptions = true,
    description = {
      "Print a completion script for bash (zsh runs it too, after 'autoload -U +X bashcompinit && "
          + "bashcompinit').",
      "Use: source <(spbgit completion bash), or save it as ~/.local/share/bash-completion/completions/spbgit."
    })
public final class CompletionCommand implements Runnable {

  /** The shells the script supports. */
  enum Shell {
    bash,
    zsh
  }

  private final Cli cli;
  @Spec CommandSpec spec;

  @Parameters(
      paramLabel = "<shell>",
      arity = "0..1",
      defaultValue = "bash",
      description = "${COMPLETION-CANDIDATES} (default: bash).")
  Shell shell;

  CompletionCommand(Cli cli) {
    this.cli = cli;
  }

  @Override
  public void run() {
    cli.out().print(AutoComplete.bash("spbgit", spec.root().commandLine()));
    cli.out().flush();
  }
}
