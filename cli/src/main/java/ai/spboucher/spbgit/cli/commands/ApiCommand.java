package ai.spboucher.spbgit.cli.commands;

import ai.spboucher.spbgit.cli.CliCommand;
import ai.spboucher.spbgit.cli.ExitCode;
import ai.spboucher.spbgit.cli.api.ApiClient;
import ai.spboucher.spbgit.cli.text.Table;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.function.Function;

/**
 * A command that calls the gateway's API. {@link #check} first refuses what needs no gateway (bad
 * arguments, a deletion not confirmed), so that it is refused even where no gateway is configured;
 * then {@link #run} gets the client for the configured gateway, or the configuration's failure ends
 * the command.
 */
abstract class ApiCommand extends CliCommand {

  @Override
  public final Integer call() throws InterruptedException {
    check();
    return run(cli.api());
  }

  /** Refuses, before the configuration is read, what the command refuses on its own. */
  void check() {}

  /** Does the command's work with {@code api}; its exit code. */
  abstract int run(ApiClient api) throws InterruptedException;

  /**
   * Prints {@code items} as the gateway answered them with {@code --json}, else {@code table} with
   * the cells {@code row} makes of each item; {@link ExitCode#OK}.
   */
  int printTable(JsonNode items, Table table, Function<JsonNode, Object[]> row) {
    if (cli.json()) {
      cli.printJson(items);
    } else {
      items.forEach(item -> table.row(row.apply(item)));
      cli.out().print(table.render());
    }
    return ExitCode.OK;
  }

  /** Puts {@code field} in a request's {@code body} unless {@code value} is null (not given). */
  static void putIfSet(ObjectNode body, String field, String value) {
    if (value != null) {
      body.put(field, value);
    }
  }
}
