package ai.spboucher.spbgit.cli.commands;

import ai.spboucher.spbgit.cli.Cli;
import picocli.CommandLine.Option;

/** The {@code --yes} of a command that deletes (a picocli mixin). */
final class Confirmation {

  @Option(
      names = {"-y", "--yes"},
      description = "Do not ask for confirmation.")
  boolean yes;

  /** Unless {@code --yes}, asks {@code question} as {@link Cli#confirm} does. */
  void ask(Cli cli, String question, String what) {
    if (!yes) {
      cli.confirm(question, what);
    }
  }
}
