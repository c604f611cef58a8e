package ai.spboucher.spbgit.builtinagent.tools;

import ai.spboucher.spbgit.builtinagent.BreachSignal;
import ai.spboucher.spbgit.builtinagent.model.ToolSpec;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.file.NoSuchFileException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The tools the model may call, their schemas, and their dispatch. Arguments arrive as raw JSON
 * text written by the model; anything malformed becomes an error result the model can correct,
 * never an exception out of the loop. Single-threaded: the loop calls one tool at a time.
 */
public final class ToolBox {
  public static final String FINISH = "finish";
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final JsonNodeFactory NODES = JsonNodeFactory.instance;

  private final Workspace workspace;
  private final FileTools files;
  private final CommandTool commands;

  public ToolBox(Workspace workspace, BreachSignal breach) {
    this(workspace, breach, Duration.ofSeconds(10));
  }

  ToolBox(Workspace workspace, BreachSignal breach, Duration searchTime) {
    this.workspace = workspace;
    this.files = new FileTools(workspace, searchTime);
    this.commands = new CommandTool(workspace, breach);
  }

  public Workspace workspace() {
    return workspace;
  }

  /** The tools, as every provider is told about them. */
  public static List<ToolSpec> specs() {
    List<ToolSpec> all = new ArrayList<>(readingSpecs());
    all.addAll(writingSpecs());
    all.addAll(
        List.of(
            spec(
                "run_command",
                "Run a shell command (sh -c) in the repository root, with no terminal and no input. "
                    + "Returns the exit code and the combined output (at most 16 KiB: the start and the end). The "
                    + "command and anything it started is killed after timeout_seconds (default "
                    + CommandTool.DEFAULT_TIMEOUT
                    + ", at most "
                    + CommandTool.MAX_TIMEOUT
                    + ") or when it returns.",
                required("command", "string", "the shell command"),
                optional(
                    "timeout_seconds",
                    "integer",
                    "seconds before the command is killed (at most "
                        + CommandTool.MAX_TIMEOUT
                        + ")")),
            spec(
                FINISH,
                "End the work. Call it once the task is done, or when it cannot be done. The harness then "
                    + "runs the owner's tests and commits every change in the working tree: do not commit yourself.",
                required("summary", "string", "what you changed and why, or what stopped you"))));
    return List.copyOf(all);
  }

  /** The tools that read the repository. */
  private static List<ToolSpec> readingSpecs() {
    return List.of(
        spec(
            "list_files",
            "List the files and directories under a path of the repository, recursively and "
                + "sorted, at most "
                + FileTools.LIST_CAP
                + " entries. Directories end with '/'. .git is not shown.",
            optional(
                "path",
                "string",
                "directory or file, relative to the repository root (default: the root)")),
        spec(
            "read_file",
            "Read a text file of the repository. Returns up to `limit` lines (default "
                + FileTools.DEFAULT_READ_LINES
                + ") starting at line `offset` (counted from 1), at most 64 KiB; "
                + "a note at the end says how to read on.",
            FILE_PATH,
            optional("offset", "integer", "first line to return (default 1)"),
            optional("limit", "integer", "most lines to return")),
        spec(
            "search",
            "Search the text files under a path, line by line, for a Java regular expression. "
                + "Returns up to "
                + FileTools.SEARCH_MATCHES
                + " matches as path:line: text.",
            required("pattern", "string", "Java regular expression, e.g. \"class \\\\w+Test\""),
            optional(
                "path", "string", "directory or file to search (default: the whole repository)")));
  }

  /** The tools that change files of the repository. */
  private static List<ToolSpec> writingSpecs() {
    return List.of(
        spec(
            "write_file",
            "Create or overwrite a file with the given content (UTF-8, at most 1 MiB). Missing "
                + "parent directories are created. Prefer replace_in_file for small changes to an existing file.",
            FILE_PATH,
            required("content", "string", "the complete new content of the file")),
        spec(
            "replace_in_file",
            "Replace one exact occurrence of `old` with `new` in a file. `old` must match "
                + "the file exactly, whitespace and indentation included, and occur exactly once: include "
                + "neighbouring lines to make it unique.",
            FILE_PATH,
            required("old", "string", "the exact text to replace"),
            required("new", "string", "the replacement text")));
  }

  /** Runs one call. Never throws: every failure is a result for the model. */
  public ToolResult execute(String name, String arguments) {
    JsonNode args;
    try {
      args =
          arguments == null || arguments.isBlank() ? NODES.objectNode() : JSON.readTree(arguments);
    } catch (JsonProcessingException e) {
      return ToolResult.failed(
          "the arguments are not valid JSON ("
              + e.getOriginalMessage()
              + "): send a JSON object matching the tool's schema");
    }
    if (args == null || !args.isObject()) {
      return ToolResult.failed("the arguments must be a JSON object");
    }
    try {
      return switch (name) {
        case "list_files" -> files.list(Args.optionalString(args, "path", "."));
        case "read_file" ->
            files.read(
                Args.string(args, "path"),
                Args.optionalInt(args, "offset", 1),
                Args.optionalInt(args, "limit", FileTools.DEFAULT_READ_LINES));
        case "search" ->
            files.search(Args.string(args, "pattern"), Args.optionalString(args, "path", "."));
        case "write_file" -> files.write(Args.string(args, "path"), Args.string(args, "content"));
        case "replace_in_file" ->
            files.replace(
                Args.string(args, "path"), Args.string(args, "old"), Args.string(args, "new"));
        case "run_command" ->
            commands.run(
                Args.string(args, "command"),
                Args.optionalInt(args, "timeout_seconds", CommandTool.DEFAULT_TIMEOUT));
        default ->
            ToolResult.failed(
                "unknown tool '"
                    + name
                    + "'; the tools are list_files, read_file, search, "
                    + "write_file, replace_in_file, run_command and finish");
      };
    } catch (IllegalArgumentException e) {
      return ToolResult.failed("invalid arguments: " + e.getMessage());
    } catch (PathRefusedException e) {
      return ToolResult.failed("refused: " + e.getMessage());
    } catch (NoSuchFileException e) {
      return ToolResult.failed(
          e.getFile() != null && e.getFile().endsWith("does not exist")
              ? e.getFile()
              : "no such file: " + e.getFile());
    } catch (IOException e) {
      return ToolResult.failed(e.getClass().getSimpleName() + ": " + e.getMessage());
    }
  }

  /** The target a progress line shows for a call: its path, pattern or command. */
  public static String target(String name, String arguments) {
    try {
      JsonNode args = JSON.readTree(arguments == null || arguments.isBlank() ? "{}" : arguments);
      String field =
          switch (name) {
            case "search" -> "pattern";
            case "run_command" -> "command";
            case FINISH -> "";
            default -> "path";
          };
      return field.isEmpty() || args == null ? "" : args.path(field).asText("");
    } catch (JsonProcessingException e) {
      return "";
    }
  }

  private record Param(String name, String type, String description, boolean required) {}

  private static final Param FILE_PATH =
      required("path", "string", "file path relative to the repository root");

  private static Param required(String name, String type, String description) {
    return new Param(name, type, description, true);
  }

  private static Param optional(String name, String type, String description) {
    return new Param(name, type, description, false);
  }

  private static ToolSpec spec(String name, String description, Param... params) {
    ObjectNode schema = NODES.objectNode().put("type", "object");
    ObjectNode properties = schema.putObject("properties");
    var required = schema.putArray("required");
    for (Param param : params) {
      properties
          .putObject(param.name())
          .put("type", param.type())
          .put("description", param.description());
      if (param.required()) {
        required.add(param.name());
      }
    }
    schema.put("additionalProperties", false);
    return new ToolSpec(name, description, schema);
  }
}
