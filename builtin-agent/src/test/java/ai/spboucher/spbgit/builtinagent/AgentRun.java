package ai.spboucher.spbgit.builtinagent;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/** Runs the real agent loop against a fake provider, on a temp git checkout. */
final class AgentRun {
  static final String README = "# Demo\n\nHello world\n";

  final Path repo;
  final Path breach;
  final Path resultFile;
  AgentConfig.Provider provider;
  String url;
  String task = "Change the greeting in README.md to 'Hello agent'.";
  int maxSteps = 40;
  Duration modelTimeout = Duration.ofSeconds(20);
  String instructions = "";

  AgentRun(Path temp, AgentConfig.Provider provider, String url)
      throws IOException, InterruptedException {
    this.repo = Files.createDirectories(temp.resolve("repo"));
    this.breach = temp.resolve(".spb").resolve("breach");
    this.resultFile = temp.resolve("result.json");
    this.provider = provider;
    this.url = url;
    Files.writeString(repo.resolve("README.md"), README);
    git("init", "-q", "-b", "main");
    git("add", "-A");
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "init");
  }

  void git(String... args) throws IOException, InterruptedException {
    List<String> command = new java.util.ArrayList<>(List.of("git", "-C", repo.toString()));
    command.addAll(List.of(args));
    Process process = new ProcessBuilder(command).inheritIO().start();
    assertEquals(0, process.waitFor(), "git " + String.join(" ", args));
  }

  AgentConfig config() {
    return new AgentConfig(
        provider,
        "fake-model",
        URI.create(url),
        task,
        "test -f README.md",
        repo,
        breach,
        resultFile,
        maxSteps,
        4096,
        modelTimeout,
        instructions);
  }

  Outcome run() throws IOException {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8);
    int code = new Agent(config(), new Progress(out)).run();
    return new Outcome(code, bytes.toString(StandardCharsets.UTF_8), resultFile);
  }

  String readme() throws IOException {
    return Files.readString(repo.resolve("README.md"));
  }

  record Outcome(int code, String output, Path resultFile) {
    List<String> lines() {
      return output.lines().toList();
    }

    /** The JSON of the last line, which must be the SPB-AGENT-RESULT line. */
    JsonNode result() throws IOException {
      List<String> lines = lines();
      String last = lines.get(lines.size() - 1);
      if (!last.startsWith(Progress.RESULT_PREFIX)) {
        throw new AssertionError("the last line is not the result line: " + last);
      }
      JsonNode json = new ObjectMapper().readTree(last.substring(Progress.RESULT_PREFIX.length()));
      assertEquals(
          json, new ObjectMapper().readTree(Files.readString(resultFile)), "the result file");
      return json;
    }

    boolean hasLine(String start) {
      return lines().stream().anyMatch(line -> line.startsWith(start));
    }
  }
}
