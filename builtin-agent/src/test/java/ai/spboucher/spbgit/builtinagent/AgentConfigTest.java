package ai.spboucher.spbgit.builtinagent;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class AgentConfigTest {
  private static Map<String, String> env() {
    Map<String, String> env = new HashMap<>();
    env.put("SPB_MODEL_PROVIDER", "openai");
    env.put("SPB_MODEL", "gpt-4.1-mini");
    env.put("SPB_TASK", "Add a test");
    return env;
  }

  @Test
  void appliesTheDocumentedDefaults() {
    AgentConfig config = AgentConfig.from(env());

    assertEquals(AgentConfig.Provider.OPENAI, config.provider());
    assertEquals(URI.create("http://127.0.0.1:3129"), config.modelUrl());
    assertEquals(Path.of("/work/repo"), config.root());
    assertEquals(Path.of("/work/.spb/breach"), config.breachFile());
    assertNull(config.resultFile());
    assertEquals(40, config.maxSteps());
    assertEquals(8192, config.maxTokens());
    assertEquals(Duration.ofSeconds(300), config.modelTimeout());
    assertEquals("", config.instructions());
  }

  @Test
  void readsEveryVariable() {
    Map<String, String> env = env();
    env.put("SPB_MODEL_PROVIDER", "Anthropic");
    env.put("SPB_MODEL_URL", "http://127.0.0.1:9999/");
    env.put("SPB_AGENT_MAX_STEPS", "12");
    env.put("SPB_AGENT_RESULT_FILE", "/tmp/r.json");
    env.put("SPB_INSTRUCTIONS", "Use two spaces.\n");

    AgentConfig config = AgentConfig.from(env);
    assertEquals("Use two spaces.\n", config.instructions(), "kept as sent, not trimmed");

    assertEquals(AgentConfig.Provider.ANTHROPIC, config.provider());
    assertEquals(URI.create("http://127.0.0.1:9999"), config.modelUrl());
    assertEquals(12, config.maxSteps());
    assertEquals(Path.of("/tmp/r.json"), config.resultFile());
  }

  @Test
  void failsFastWithAClearMessage() {
    Map<String, String> env = env();
    env.remove("SPB_MODEL");
    assertEquals(
        "SPB_MODEL is missing",
        assertThrows(IllegalArgumentException.class, () -> AgentConfig.from(env)).getMessage());
    Map<String, String> gemini = env();
    gemini.put("SPB_MODEL_PROVIDER", "gemini");
    assertTrue(
        assertThrows(IllegalArgumentException.class, () -> AgentConfig.from(gemini))
            .getMessage()
            .contains("openai or anthropic"));
    Map<String, String> steps = env();
    steps.put("SPB_AGENT_MAX_STEPS", "many");
    assertThrows(IllegalArgumentException.class, () -> AgentConfig.from(steps));
    Map<String, String> url = env();
    url.put("SPB_MODEL_URL", "unix:///run/spb/model.sock");
    assertThrows(IllegalArgumentException.class, () -> AgentConfig.from(url));
  }

  @Test
  void theBreachSignalReadsOnlyAKnownWord(@TempDir Path temp) throws Exception {
    Path file = temp.resolve("breach");
    BreachSignal signal = new BreachSignal(file);
    assertTrue(signal.reason().isEmpty());
    Files.writeString(file, "timeout\n\u001b[2Jspoof");
    assertEquals("timeoutspoof", signal.reason().orElseThrow());
    Files.writeString(file, "");
    assertEquals("breach", signal.reason().orElseThrow());
  }

  @Test
  void progressLinesCannotBeForgedByModelText() {
    assertEquals(
        "a\\nSPB-AGENT-RESULT {} \\x1b[2J",
        Progress.clean("a\nSPB-AGENT-RESULT {}\t\u001b[2J", 100));
    assertEquals("abc", Progress.clean("a\u202eb\u200bc", 100));
    assertEquals("abcd…", Progress.clean("abcdefgh", 5));
  }
}
