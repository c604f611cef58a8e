package ai.spboucher.spbgit.cli.commands;

import ai.spboucher.spbgit.cli.CliCommand;
import ai.spboucher.spbgit.cli.CliException;
import ai.spboucher.spbgit.cli.Config;
import ai.spboucher.spbgit.cli.ExitCode;
import ai.spboucher.spbgit.cli.api.ApiClient;
import java.io.IOException;
import java.nio.file.Path;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code spbgit login}: checks a gateway URL and owner token, then saves them in the config file.
 */
@Command(
    name = "login",
    description = {
      "Check a gateway URL and an owner token (GET /api/v1/tokens), then save both in "
          + "$XDG_CONFIG_HOME/spbgit/config.json (default ~/.config/spbgit/config.json), mode 0600.",
      "Without --token, the token is read from the terminal without echo, or else from the first line of "
          + "stdin (printf '%s\\n' \"$TOKEN\" | spbgit login --url URL), which keeps it out of the process list.",
      "SPB_URL and SPB_TOKEN, when set, still override the file."
    })
public final class LoginCommand extends CliCommand {

  static final String DEFAULT_URL = "http://127.0.0.1:8080";

  @Option(
      names = "--url",
      paramLabel = "URL",
      description = "The gateway, e.g. " + DEFAULT_URL + ".")
  String url;

  @Option(
      names = "--token",
      paramLabel = "TOKEN",
      description =
          "The owner token (visible to other local users in the process list: prefer stdin).")
  String token;

  @Override
  public Integer call() {
    String gateway = Config.normalizeUrl(url != null ? url : askUrl());
    String secret = token != null ? token : cli.readSecret("Owner token: ");
    if (secret == null || secret.isBlank()) {
      throw new CliException(
          ExitCode.USAGE, "no token given (--token, the terminal, or the first line of stdin)");
    }
    secret = secret.strip();
    new ApiClient(gateway, secret).get("/api/v1/tokens");
    Path file = cli.configFile();
    try {
      new Config(gateway, secret).write(file);
    } catch (IOException e) {
      throw new CliException(ExitCode.FAILED, "cannot write " + file + ": " + e.getMessage());
    }
    if (cli.json()) {
      cli.printJson(
          ApiClient.JSON.createObjectNode().put("url", gateway).put("config", file.toString()));
      return ExitCode.OK;
    }
    cli.out().println("logged in to " + gateway + "; saved in " + file);
    if (cli.env().get(Config.URL_VARIABLE) != null
        || cli.env().get(Config.TOKEN_VARIABLE) != null) {
      cli.err()
          .println(
              "note: "
                  + Config.URL_VARIABLE
                  + "/"
                  + Config.TOKEN_VARIABLE
                  + " are set in this shell and override the file");
    }
    return ExitCode.OK;
  }

  private String askUrl() {
    if (!cli.stdinTerminal()) {
      throw new CliException(ExitCode.USAGE, "--url is required when stdin is not a terminal");
    }
    String answer = cli.readLine("Gateway URL [" + DEFAULT_URL + "]: ");
    return answer == null || answer.isBlank() ? DEFAULT_URL : answer;
  }
}
