package ai.spboucher.spbgit.cli;

import java.io.ByteArrayInputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.util.Map;

/**
 * One in-process run of {@code spbgit} with captured streams, for unit tests (no process, no
 * terminal).
 */
record CliRun(int exit, String out, String err) {

  static CliRun of(Map<String, String> env, String stdin, String... args) {
    return of(false, env, stdin, args);
  }

  /** {@code stdinTerminal}: run as if stdin were a terminal (it still reads {@code stdin}). */
  static CliRun of(boolean stdinTerminal, Map<String, String> env, String stdin, String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    Cli cli =
        new Cli(
            env,
            new PrintWriter(out),
            new PrintWriter(err),
            new ByteArrayInputStream(stdin.getBytes(StandardCharsets.UTF_8)),
            stdinTerminal,
            false);
    int exit = SpbGit.run(cli, args);
    cli.out().flush();
    cli.err().flush();
    return new CliRun(exit, out.toString(), err.toString());
  }

  /** The stderr lines; a failure must be exactly one. */
  java.util.List<String> errLines() {
    return err.lines().toList();
  }
}
