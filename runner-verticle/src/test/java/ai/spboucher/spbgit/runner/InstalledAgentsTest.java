package ai.spboucher.spbgit.runner;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.spboucher.spbgit.proto.CodingAgent;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

class InstalledAgentsTest {

  static final String LABEL = "claude-code@2.1.328,codex@0.169.0,qwen-code@0.24.4";

  @Test
  void readsEachAgentsVersionFromTheLabel() {
    InstalledAgents installed = InstalledAgents.fromLabel(LABEL);
    assertEquals("2.1.328", installed.version(CodingAgent.CLAUDE_CODE));
    assertEquals("0.169.0", installed.version(CodingAgent.CODEX));
    assertEquals("0.24.4", installed.version(CodingAgent.QWEN_CODE));
    assertEquals(InstalledAgents.BUILTIN_VERSION, installed.version(CodingAgent.BUILTIN));
  }

  @Test
  void admitsACliTheImageCarriesOnARunnerOfItsProvider() {
    InstalledAgents installed = InstalledAgents.fromLabel(LABEL);
    assertNull(installed.refusal(CodingAgent.CLAUDE_CODE, "img", "anthropic"));
    assertNull(installed.refusal(CodingAgent.CODEX, "img", "openai"));
    assertNull(installed.refusal(CodingAgent.QWEN_CODE, "img", "openai"));
  }

  @Test
  void refusesACliOfAnotherProvidersApiNamingBoth() {
    String refusal =
        InstalledAgents.fromLabel(LABEL).refusal(CodingAgent.CODEX, "img", "anthropic");
    assertTrue(refusal.contains("codex") && refusal.contains("openai"), refusal);
    assertTrue(refusal.contains("anthropic"), refusal);
  }

  @Test
  void refusesACliTheImageDoesNotCarryNamingTheImageAndWhatItHas() {
    String refusal =
        InstalledAgents.fromLabel("qwen-code@0.24.4")
            .refusal(CodingAgent.CLAUDE_CODE, "spbgit/agent:old", "anthropic");
    assertTrue(refusal.contains("spbgit/agent:old"), refusal);
    assertTrue(refusal.contains("claude-code") && refusal.contains("qwen-code"), refusal);
  }

  @Test
  void anImageBuiltBeforeAgentsCarriesNoCliButTheBuiltinRunsAnywhere() {
    InstalledAgents none = InstalledAgents.fromLabel(null);
    assertTrue(
        none.refusal(CodingAgent.QWEN_CODE, "img", "openai").contains("no spb.agent.clis label"));
    assertNull(none.refusal(CodingAgent.BUILTIN, "img", "openai"));
    assertNull(none.refusal(CodingAgent.BUILTIN, "img", "anthropic"));
  }

  /**
   * The versions docker/job-image/fetch-agent-clis.sh installs (and build.sh writes into the label)
   * are the ones the contract names.
   */
  @Test
  void fetchAgentClisPinsAreCodingAgentsPinnedVersions() throws Exception {
    Path script =
        Path.of("").toAbsolutePath().getParent().resolve("docker/job-image/fetch-agent-clis.sh");
    Process list = new ProcessBuilder(script.toString(), "--list").start();
    String printed =
        new String(list.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
    assertEquals(0, list.waitFor(), printed);
    String expected =
        Arrays.stream(CodingAgent.values())
            .filter(agent -> agent != CodingAgent.BUILTIN)
            .map(agent -> agent.id() + "@" + agent.pinnedVersion())
            .collect(Collectors.joining(","));
    assertEquals(expected, printed);
    assertEquals(
        expected,
        InstalledAgents.fromLabel(printed).versions().entrySet().stream()
            .map(e -> e.getKey() + "@" + e.getValue())
            .collect(Collectors.joining(",")));
  }
}
