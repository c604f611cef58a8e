package ai.spboucher.spbgit.cli.commands;

import ai.spboucher.spbgit.cli.api.ApiClient;
import ai.spboucher.spbgit.cli.text.AnsiFilter;
import ai.spboucher.spbgit.cli.text.Table;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code spbgit repo create|list|delete}. */
@Command(
    name = "repo",
    mixinStandardHelpOptions = true,
    description = "Create, list and delete repositories.",
    subcommands = {RepoCommand.Create.class, RepoCommand.List.class, RepoCommand.Delete.class})
public final class RepoCommand {

  @Command(name = "create", description = "Create an empty repository (exit 5 if it exists).")
  static final class Create extends ApiCommand {

    @Parameters(paramLabel = "<name>", description = "Letters, digits, '.', '_' and '-'.")
    String name;

    @Option(
        names = {"-d", "--description"},
        paramLabel = "TEXT",
        description = "A one-line description.")
    String description;

    @Override
    int run(ApiClient api) {
      ObjectNode body = ApiClient.JSON.createObjectNode().put("name", name);
      putIfSet(body, "description", description);
      JsonNode repo = api.post("/api/v1/repos", body);
      return print(
          repo,
          () ->
              "created "
                  + AnsiFilter.plain(repo.path("name").asText())
                  + ": "
                  + AnsiFilter.plain(repo.path("clone_url").asText()));
    }
  }

  @Command(name = "list", aliases = "ls", description = "List repositories with their clone URLs.")
  static final class List extends ApiCommand {

    @Override
    int run(ApiClient api) {
      return printTable(
          api.get("/api/v1/repos"),
          new Table("NAME", "CLONE URL", "DESCRIPTION"),
          r ->
              new Object[] {
                r.path("name").asText(),
                r.path("clone_url").asText(),
                r.path("description").asText("")
              });
    }
  }

  @Command(
      name = "delete",
      description =
          "Delete a repository with all its history and agent refs. Asks for confirmation unless "
              + "--yes; refuses (exit 2) when it cannot ask because stdin is not a terminal.")
  static final class Delete extends ApiCommand {

    @Parameters(paramLabel = "<name>", description = "The repository.")
    String name;

    @Mixin Confirmation confirmation;

    @Override
    void check() {
      confirmation.ask(
          cli,
          "Delete repository " + AnsiFilter.plain(name) + " and all its history?",
          "delete repository " + name);
    }

    @Override
    int run(ApiClient api) {
      api.delete("/api/v1/repos/" + ApiClient.segment(name));
      return print(
          ApiClient.JSON.createObjectNode().put("deleted", name),
          () -> "deleted " + AnsiFilter.plain(name));
    }
  }
}
