package ai.spboucher.spbgit.cli;

import ai.spboucher.spbgit.cli.api.ApiClient;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import java.io.BufferedReader;
import java.io.Console;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

/**
 * What one run of {@code spbgit} works with: the environment, the standard streams (UTF-8, whatever
 * the locale), whether they are terminals, the output options ({@code --json}, {@code --color})
 * and, once asked for, the configured {@link ApiClient}. Every {@link CliCommand} is handed it.
 */
public final class Cli {

  private final Map<String, String> env;
  private final PrintWriter out;
  private final PrintWriter err;
  private final BufferedReader in;
  private final boolean stdinTerminal;
  private final boolean stdoutTerminal;
  private boolean json;
  private ColorMode color = ColorMode.auto;
  private ApiClient api;

  public Cli(
      Map<String, String> env,
      PrintWriter out,
      PrintWriter err,
      InputStream in,
      boolean stdinTerminal,
      boolean stdoutTerminal) {
    this.env = Map.copyOf(env);
    this.out = out;
    this.err = err;
    this.in = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8));
    this.stdinTerminal = stdinTerminal;
    this.stdoutTerminal = stdoutTerminal;
  }

  /** The process's own environment and streams. */
  public static Cli system() {
    return new Cli(
        System.getenv(),
        new PrintWriter(
            new OutputStreamWriter(
                new FileOutputStream(FileDescriptor.out), StandardCharsets.UTF_8)),
        new PrintWriter(
            new OutputStreamWriter(
                new FileOutputStream(FileDescriptor.err), StandardCharsets.UTF_8),
            true),
        System.in,
        isTerminal(0),
        isTerminal(1));
  }

  /**
   * Whether file descriptor {@code fd} is a terminal. Java 17 can only tell whether stdin and
   * stdout both are ({@code System.console()}), so on Linux the descriptor's target is read
   * instead.
   */
  static boolean isTerminal(int fd) {
    try {
      String target = Files.readSymbolicLink(Path.of("/proc/self/fd/" + fd)).toString();
      return target.startsWith("/dev/pts/")
          || target.startsWith("/dev/tty")
          || target.equals("/dev/console");
    } catch (IOException | UnsupportedOperationException | SecurityException e) {
      return System.console() != null;
    }
  }

  public Map<String, String> env() {
    return env;
  }

  public PrintWriter out() {
    return out;
  }

  public PrintWriter err() {
    return err;
  }

  public boolean stdinTerminal() {
    return stdinTerminal;
  }

  public boolean json() {
    return json;
  }

  void setJson(boolean json) {
    this.json = json;
  }

  void setColor(ColorMode color) {
    this.color = color;
  }

  /**
   * Whether colour sequences of job logs reach stdout: {@code --color}, else {@code NO_COLOR}, else
   * a tty.
   */
  public boolean keepColours() {
    return switch (color) {
      case always -> true;
      case never -> false;
      case auto -> stdoutTerminal && (env.get("NO_COLOR") == null || env.get("NO_COLOR").isEmpty());
    };
  }

  /** The configuration in force (environment over config file). */
  public Config config() {
    return Config.resolve(env, configFile());
  }

  public Path configFile() {
    return Config.file(env);
  }

  /**
   * The API client for the configured gateway; fails with a clear message when none is configured.
   */
  public ApiClient api() {
    if (api == null) {
      Config config = config();
      api = new ApiClient(config.requireUrl(), config.token());
    }
    return api;
  }

  /** Prints {@code node} as indented JSON on stdout. */
  public void printJson(JsonNode node) {
    try {
      out.println(ApiClient.JSON.writerWithDefaultPrettyPrinter().writeValueAsString(node));
      out.flush();
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("cannot encode JSON", e);
    }
  }

  /**
   * A line from stdin (without its newline), or null at end of input; {@code prompt} goes to stderr
   * if set.
   */
  public String readLine(String prompt) {
    if (prompt != null) {
      err.print(prompt);
      err.flush();
    }
    try {
      return in.readLine();
    } catch (IOException e) {
      throw new CliException(ExitCode.USAGE, "cannot read standard input: " + e.getMessage());
    }
  }

  /** A secret typed without echo when there is a console, else a line from stdin. */
  public String readSecret(String prompt) {
    Console console = System.console();
    if (stdinTerminal && console != null) {
      char[] secret = console.readPassword("%s", prompt);
      return secret == null ? null : new String(secret);
    }
    return readLine(stdinTerminal ? prompt : null);
  }

  /**
   * Asks {@code question} on the terminal; without {@code --yes} a destructive command must be
   * confirmed, and when stdin is not a terminal nobody can, so it refuses with {@link
   * ExitCode#USAGE}.
   */
  public void confirm(String question, String what) {
    if (!stdinTerminal) {
      throw new CliException(
          ExitCode.USAGE,
          "refusing to "
              + what
              + " without confirmation: stdin is not a "
              + "terminal (pass --yes)");
    }
    String answer = readLine(question + " [y/N] ");
    if (answer == null
        || !(answer.strip().equalsIgnoreCase("y") || answer.strip().equalsIgnoreCase("yes"))) {
      throw new CliException(ExitCode.FAILED, "not confirmed; nothing was changed");
    }
  }
}
