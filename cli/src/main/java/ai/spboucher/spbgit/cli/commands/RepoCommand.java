package ai.spboucher.spbgit.cli.commands;

import ai.spboucher.spbgit.cli.Cli;
import ai.spboucher.spbgit.cli.api.ApiClient;
import ai.spboucher.spbgit.cli.text.AnsiFilter;
import ai.spboucher.spbgit.cli.text.Table;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code spbgit repo create|list|delete}. */
@Command(
    name = "repo",
    mixinStandardHelpOptions = true,
    description = "Create, list and delete repositories.",
    subcommands = {RepoCommand.Create.class, RepoCommand.List.class, RepoCommand.Delete.class})
public final class RepoCommand {

  @Command(
      name = "create",
      mixinStandardHelpOptions = true,
      description = "Create an empty repository (exit 5 if it exists).")
  static final class Create implements Runnable {
    private final Cli cli;

    @Parameters(paramLabel = "<name>", description = "Letters, digits, '.', '_' and '-'.")
    String name;

    @Option(
        names = {"-d", "--description"},
        paramLabel = "TEXT",
        description = "A one-line description.")
    String description;

    Create(Cli cli) {
      this.cli = cli;
    }

    @Override
    public void run() {
      ObjectNode body = ApiClient.JSON.createObjectNode().put("name", name);
      if (description != null) {
        body.put("description", description);
      }
      JsonNode repo = cli.api().post("/api/v1/repos", body);
      if (cli.json()) {
        cli.printJson(repo);
      } else {
        cli.out()
            .println(
                "created "
                    + AnsiFilter.plain(repo.path("name").asText())
                    + ": "
                    + AnsiFilter.plain(repo.path("clone_url").asText()));
      }
    }
  }

  @Command(
      name = "list",
      aliases = "ls",
      mixinStandardHelpOptions = true,
      description = "List repositories with their clone URLs.")
  static final class List implements Runnable {
    private final Cli cli;

    List(Cli cli) {
      this.cli = cli;
    }

    @Override
    public void run() {
      JsonNode repos = cli.api().get("/api/v1/repos");
      if (cli.json()) {
        cli.printJson(repos);
        return;
      }
      Table table = new Table("NAME", "CLONE URL", "DESCRIPTION");
      repos.forEach(
          r ->
              table.row(
                  r.path("name").asText(),
                  r.path("clone_url").asText(),
                  r.path("description").asText("")));
      cli.out().print(table.render());
    }
  }

  @Command(
      name = "delete",
      mixinStandardHelpOptions = true,
      description =
          "Delete a repository with all its history and agent refs. Asks for confirmation unless "
              + "--yes; refuses (exit 2) when it cannot ask because stdin is not a terminal.")
  static final class Delete implements Runnable {
    private final Cli cli;

    @Parameters(paramLabel = "<name>", description = "The repository.")
    String name;

    @Option(
        names = {"-y", "--yes"},
        description = "Do not ask for confirmation.")
    boolean yes;

    Delete(Cli cli) {
      this.cli = cli;
    }

    @Override
    public void run() {
      if (!yes) {
        cli.confirm(
            "Delete repository " + AnsiFilter.plain(name) + " and all its history?",
            "delete repository " + name);
      }
      cli.api().delete("/api/v1/repos/" + ApiClient.segment(name));
      if (cli.json()) {
        cli.printJson(ApiClient.JSON.createObjectNode().put("deleted", name));
      } else {
        cli.out().println("deleted " + AnsiFilter.plain(name));
      }
    }
  }
}
