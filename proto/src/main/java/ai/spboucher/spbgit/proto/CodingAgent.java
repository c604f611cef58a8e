package ai.spboucher.spbgit.proto;

import java.util.Arrays;
import java.util.List;
import java.util.Optional;

/**
 * The coding agents a job may run ({@code JobRequest.agent}): the built-in tool loop and the
 * third-party CLIs installed into the agent images at pinned versions by {@code
 * docker/job-image/fetch-agent-clis.sh} (whose pins must equal {@link #pinnedVersion()}; a test
 * checks it). Each CLI speaks one provider API, so it runs only on a runner whose {@code
 * SPB_MODEL_PROVIDER} is that API's provider.
 */
public enum CodingAgent {

  /** Our own tool loop ({@code /opt/spb/agent.jar}); speaks both providers' APIs. */
  BUILTIN("builtin", "", List.of("openai", "anthropic")),

  /** Anthropic's Claude Code ({@code claude -p}), Anthropic Messages with streaming. */
  CLAUDE_CODE("claude-code", "2.1.328", List.of("anthropic")),

  /** OpenAI's Codex CLI ({@code codex exec}), the OpenAI Responses API with streaming. */
  CODEX("codex", "0.169.0", List.of("openai")),

  /**
   * Qwen Code ({@code qwen -p}), an OpenAI-chat-compatible CLI: chosen over OpenCode because it
   * runs offline from its package, where OpenCode installs npm packages at its first start.
   */
  QWEN_CODE("qwen-code", "0.24.4", List.of("openai"));

  private final String id;
  private final String pinnedVersion;
  private final List<String> providers;

  CodingAgent(String id, String pinnedVersion, List<String> providers) {
    this.id = id;
    this.pinnedVersion = pinnedVersion;
    this.providers = providers;
  }

  /** The name in the API, the CLI, the audit and the images' {@code spb.agent.clis} label. */
  public String id() {
    return id;
  }

  /** The version installed into the images; empty for {@link #BUILTIN} (it is the jar's). */
  public String pinnedVersion() {
    return pinnedVersion;
  }

  /** The {@code SPB_MODEL_PROVIDER} values whose API this agent speaks. */
  public List<String> providers() {
    return providers;
  }

  /** Whether it speaks the API of {@code provider} ({@code openai} or {@code anthropic}). */
  public boolean speaks(String provider) {
    return providers.contains(provider);
  }

  /** The agent named {@code id} (empty means {@link #BUILTIN}), or empty for an unknown name. */
  public static Optional<CodingAgent> of(String id) {
    if (id == null || id.isEmpty()) {
      return Optional.of(BUILTIN);
    }
    return Arrays.stream(values()).filter(agent -> agent.id.equals(id)).findFirst();
  }

  /** The names, in order, for error messages and documentation. */
  public static List<String> ids() {
    return Arrays.stream(values()).map(CodingAgent::id).toList();
  }
}
