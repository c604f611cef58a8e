package ai.spboucher.spbgit.cli.commands;

import ai.spboucher.spbgit.cli.ExitCode;
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
      description = {
        "Create a token. Its secret is printed once, alone on stdout (the rest goes to stderr), "
            + "so that TOKEN=$(spbgit token create LABEL) works; the gateway keeps only its hash."
      })
  static final class Create extends ApiCommand {

    @Parameters(paramLabel = "<label>", description = "What the token is for.")
    String label;

    @Override
    int run(ApiClient api) {
      JsonNode created =
          api.post("/api/v1/tokens", ApiClient.JSON.createObjectNode().put("label", label));
      if (cli.json()) {
        cli.printJson(created);
        return ExitCode.OK;
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
      return ExitCode.OK;
    }
  }

  @Command(name = "list", aliases = "ls", description = "List tokens (never their secrets).")
  static final class List extends ApiCommand {

    @Override
    int run(ApiClient api) {
      return printTable(
          api.get("/api/v1/tokens"),
          new Table("ID", "LABEL", "CREATED", "LAST USED"),
          t ->
              new Object[] {
                t.path("id").asText(),
                t.path("label").asText(),
                t.path("created").asText(),
                t.path("last_used").isTextual() ? t.path("last_used").asText() : null
              });
    }
  }

  @Command(
      name = "revoke",
      description =
          "Revoke a token by its id; it stops working at once (sessions signed in with it end too).")
  static final class Revoke extends ApiCommand {

    @Parameters(paramLabel = "<id>", description = "The token's id (from 'spbgit token list').")
    String id;

    @Override
    int run(ApiClient api) {
      api.delete("/api/v1/tokens/" + ApiClient.segment(id));
      return print(
          ApiClient.JSON.createObjectNode().put("revoked", id),
          () -> "revoked token " + AnsiFilter.plain(id));
    }
  }
}
