package ai.spboucher.spbgit.cli;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.concurrent.Callable;
import java.util.function.Supplier;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * A command of {@code spbgit}, with {@code --help} and {@code --version}: it works with this run's
 * {@link Cli}, which {@link SpbGit} hands it before it runs, and {@link #call} returns its {@link
 * ExitCode}. It lets every failure go: {@link SpbGit} is the one place that turns them into a line
 * and a code.
 */
@Command(mixinStandardHelpOptions = true)
public abstract class CliCommand implements Callable<Integer> {

  /** This run's environment, streams and output options. */
  protected Cli cli;

  @Spec protected CommandSpec spec;

  void attach(Cli cli) {
    this.cli = cli;
  }

  /**
   * A usage error in this command's arguments: {@code spbgit: <message> (see '<command> --help')}
   * and {@link ExitCode#USAGE}.
   */
  protected ParameterException usage(String message) {
    return new ParameterException(spec.commandLine(), message);
  }

  /**
   * Prints {@code answer} as JSON with {@code --json}, else the line {@code text} makes; {@link
   * ExitCode#OK}.
   */
  protected int print(JsonNode answer, Supplier<String> text) {
    if (cli.json()) {
      cli.printJson(answer);
    } else {
      cli.out().println(text.get());
    }
    return ExitCode.OK;
  }
}
