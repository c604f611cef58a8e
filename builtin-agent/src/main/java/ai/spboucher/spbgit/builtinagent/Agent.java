package ai.spboucher.spbgit.builtinagent;

import ai.spboucher.spbgit.builtinagent.model.AnthropicMessages;
import ai.spboucher.spbgit.builtinagent.model.BudgetExceededException;
import ai.spboucher.spbgit.builtinagent.model.Message;
import ai.spboucher.spbgit.builtinagent.model.ModelClient;
import ai.spboucher.spbgit.builtinagent.model.ModelHttp;
import ai.spboucher.spbgit.builtinagent.model.OpenAiChat;
import ai.spboucher.spbgit.builtinagent.model.ProviderException;
import ai.spboucher.spbgit.builtinagent.model.StopRequestedException;
import ai.spboucher.spbgit.builtinagent.prompt.Prompts;
import ai.spboucher.spbgit.builtinagent.tools.ToolBox;
import ai.spboucher.spbgit.builtinagent.tools.ToolResult;
import ai.spboucher.spbgit.builtinagent.tools.Workspace;
import ai.spboucher.spbgit.common.TaskSanitizer;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * The tool-using loop: ask the model, run the tools it calls, send back the results, until it calls
 * finish, the step limit is reached, the runner signals a breach, or the provider fails. A step is
 * one tool call. Runs on the calling thread; one agent per process.
 */
public final class Agent {
  static final int MAX_RETRIES = 3;
  static final Duration MAX_RETRY_WAIT = Duration.ofSeconds(60);
  private static final ObjectMapper JSON = new ObjectMapper();

  private final AgentConfig config;
  private final Progress progress;
  private final BreachSignal breach;
  private final ToolBox tools;
  private final ModelClient model;
  private int steps;

  public Agent(AgentConfig config, Progress progress) throws IOException {
    this.config = config;
    this.progress = progress;
    this.breach = new BreachSignal(config.breachFile());
    this.tools = new ToolBox(new Workspace(config.root()), breach);
    ModelHttp http =
        new ModelHttp(
            config.modelUrl(),
            config.modelTimeout(),
            breach,
            MAX_RETRIES,
            MAX_RETRY_WAIT,
            progress::line);
    // From the request, read once: the job's edits to AGENTS.md in the checkout never reach it.
    String system = Prompts.system(config.maxSteps(), config.instructions());
    this.model =
        switch (config.provider()) {
          case OPENAI -> new OpenAiChat(http, config.model(), system, ToolBox.specs());
          case ANTHROPIC ->
              new AnthropicMessages(
                  http, config.model(), system, config.maxTokens(), ToolBox.specs());
        };
  }

  /** Runs the loop to its end, prints the result line, and returns the exit code. */
  public int run() {
    progress.line(
        "llm mode: "
            + config.provider().name().toLowerCase(Locale.ROOT)
            + " model "
            + Progress.clean(config.model(), 80)
            + ", at most "
            + config.maxSteps()
            + " steps, in "
            + tools.workspace().root());
    TaskSanitizer.Sanitized task = TaskSanitizer.sanitize(config.task());
    progress.line(
        "task: "
            + task.text().length()
            + " characters"
            + (task.hiddenCharacters() + task.htmlComments() > 0
                ? " (removed "
                    + task.hiddenCharacters()
                    + " hidden characters and "
                    + task.htmlComments()
                    + " HTML comments)"
                : ""));
    if (!config.instructions().isBlank()) {
      progress.line(
          "owner's instructions: "
              + config.instructions().length()
              + " characters of AGENTS.md from the default branch");
    }
    List<Message> transcript = new ArrayList<>();
    transcript.add(new Message.UserText(Prompts.task(task.text(), config.testCommand())));
    try {
      return loop(transcript);
    } catch (BudgetExceededException e) {
      return end(
          AgentExit.STOPPED_BY_RUNNER,
          "stopped: the model budget is spent (" + e.getMessage() + ")");
    } catch (StopRequestedException e) {
      return end(AgentExit.STOPPED_BY_RUNNER, "stopped: " + e.getMessage());
    } catch (ProviderException e) {
      return end(AgentExit.PROVIDER_ERROR, "provider error: " + e.getMessage());
    }
  }

  private int loop(List<Message> transcript)
      throws ProviderException, BudgetExceededException, StopRequestedException {
    boolean nudged = false;
    while (true) {
      checkBreach();
      long started = System.nanoTime();
      Message.AssistantTurn turn = model.next(transcript);
      transcript.add(turn);
      reportTurn(turn, millisSince(started));
      if (turn.calls().isEmpty()) {
        if (!nudged) {
          nudged = true;
          transcript.add(
              new Message.UserText(turn.truncated() ? Prompts.TRUNCATED : Prompts.NUDGE));
          continue;
        }
        return finish(
            turn.text().isBlank() ? "(the model stopped without a summary)" : turn.text());
      }
      nudged = false;
      List<Message.ToolOutput> outputs = new ArrayList<>();
      for (Message.ToolCall call : turn.calls()) {
        checkBreach();
        if (ToolBox.FINISH.equals(call.name())) {
          steps++;
          String summary = summary(call.arguments());
          progress.line("step " + steps + ": finish");
          return finish(summary);
        }
        if (steps >= config.maxSteps()) {
          return end(
              AgentExit.STEP_LIMIT,
              "step limit of " + config.maxSteps() + " reached before the model finished");
        }
        steps++;
        outputs.add(runStep(call, turn.truncated()));
      }
      transcript.add(new Message.ToolResults(outputs));
    }
  }

  private Message.ToolOutput runStep(Message.ToolCall call, boolean truncated) {
    long started = System.nanoTime();
    ToolResult result =
        truncated
            ? new ToolResult(Prompts.TRUNCATED_CALL, true, "not run: reply cut off")
            : call.name().isEmpty()
                ? new ToolResult("the tool call has no name", true, "error: no tool name")
                : tools.execute(call.name(), call.arguments());
    String target = Progress.clean(ToolBox.target(call.name(), call.arguments()), 100);
    progress.line(
        "step "
            + steps
            + ": "
            + Progress.clean(call.name(), 40)
            + (target.isEmpty() ? "" : " " + target)
            + " ("
            + Progress.clean(result.detail(), 160)
            + ", "
            + millisSince(started)
            + " ms)");
    return new Message.ToolOutput(call.id(), result.content(), result.error());
  }

  private void reportTurn(Message.AssistantTurn turn, long millis) {
    int calls = turn.calls().size();
    String what = calls == 0 ? "no tool call" : calls == 1 ? "1 tool call" : calls + " tool calls";
    String text = turn.text().isBlank() ? "" : ": " + Progress.clean(turn.text(), 200);
    progress.line(
        "model replied in "
            + String.format(Locale.ROOT, "%.1f", millis / 1000.0)
            + " s, "
            + what
            + (turn.truncated() ? " (cut off at the token limit)" : "")
            + text);
  }

  private void checkBreach() throws StopRequestedException {
    Optional<String> reason = breach.reason();
    if (reason.isPresent()) {
      throw new StopRequestedException(reason.get());
    }
  }

  private int finish(String summary) {
    String clean = TaskSanitizer.stripHidden(summary).strip();
    progress.line("finished after " + steps + " steps: " + Progress.clean(clean, 300));
    progress.result(steps, true, clean, config.resultFile());
    return AgentExit.FINISHED.code();
  }

  private int end(AgentExit exit, String message) {
    progress.line(message);
    progress.result(steps, false, message, config.resultFile());
    return exit.code();
  }

  /** finish's summary; a model that mangles even this still finishes, with its raw text. */
  private static String summary(String arguments) {
    try {
      var args = JSON.readTree(arguments == null || arguments.isBlank() ? "{}" : arguments);
      if (args != null && args.path("summary").isTextual()) {
        return args.get("summary").asText();
      }
    } catch (IOException e) {
      // falls through to the raw text
    }
    return arguments == null ? "" : arguments;
  }

  private static long millisSince(long nanos) {
    return (System.nanoTime() - nanos) / 1_000_000;
  }
}
