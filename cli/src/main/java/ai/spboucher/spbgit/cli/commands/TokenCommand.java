package ai.spboucher.spbgit.cli.commands;

import ai.spboucher.spbgit.cli.Cli;
import ai.spboucher.spbgit.cli.api.ApiClient;
import ai.spboucher.spbgit.cli.text.AnsiFilter;
import ai.spboucher.spbgit.cli.text.Table;
import com.fasterxml.jackson.databind.JsonNode;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/** {@code spbgit token create|list|revoke}: the owner's personal access tokens. */
@Command(
    name = "token",
    mixinStandardHelpOptions = true,
    description = "Create, list and revoke the owner's personal access tokens.",
    subcommands = {TokenCommand.Create.class, TokenCommand.List.class, TokenCommand.Revoke.class})
public final class TokenCommand {

  @Command(
      name = "create",
      mixinStandardHelpOptions = true,
      description = {
        "Create a token. Its secret is printed once, alone on stdout (the rest goes to stderr), "
            + "so that TOKEN=$(spbgit token create LABEL) works; the gateway keeps only its hash."
      })
  static final class Create implements Runnable {
    private final Cli cli;

    @Parameters(paramLabel = "<label>", description = "What the token is for.")
    String label;

    Create(Cli cli) {
      this.cli = cli;
    }

    @Override
    public void run() {
      JsonNode created =
          cli.api().post("/api/v1/tokens", ApiClient.JSON.createObjectNode().put("label", label));
      if (cli.json()) {
        cli.printJson(created);
        return;
      }
      cli.err()
          .println(
              "created token "
                  + AnsiFilter.plain(created.path("id").asText())
                  + " ("
                  + AnsiFilter.plain(created.path("label").asText())
                  + "); its secret is shown only now:");
      cli.err().flush();
      cli.out().println(created.path("token").asText());
    }
  }

  @Command(
      name = "list",
      aliases = "ls",
      mixinStandardHelpOptions = true,
      description = "List tokens (never their secrets).")
  static final class List implements Runnable {
    private final Cli cli;

    List(Cli cli) {
      this.cli = cli;
    }

    @Override
    public void run() {
      JsonNode tokens = cli.api().get("/api/v1/tokens");
      if (cli.json()) {
        cli.printJson(tokens);
        return;
      }
      Table table = new Table("ID", "LABEL", "CREATED", "LAST USED");
      tokens.forEach(
          t ->
              table.row(
                  t.path("id").asText(),
                  t.path("label").asText(),
                  t.path("created").asText(),
                  t.path("last_used").isTextual() ? t.path("last_used").asText() : null));
      cli.out().print(table.render());
    }
  }

  @Command(
      name = "revoke",
      mixinStandardHelpOptions = true,
      description =
          "Revoke a token by its id; it stops working at once (sessions signed in with it end too).")
  static final class Revoke implements Runnable {
    private final Cli cli;

    @Parameters(paramLabel = "<id>", description = "The token's id (from 'spbgit token list').")
    String id;

    Revoke(Cli cli) {
      this.cli = cli;
    }

    @Override
    public void run() {
      cli.api().delete("/api/v1/tokens/" + ApiClient.segment(id));
      if (cli.json()) {
        cli.printJson(ApiClient.JSON.createObjectNode().put("revoked", id));
      } else {
        cli.out().println("revoked token " + AnsiFilter.plain(id));
      }
    }
  }
}
