package ai.spboucher.spbgit.runner;

import ai.spboucher.spbgit.proto.CodingAgent;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The coding-agent CLIs an agent image carries, as its {@value #LABEL} label lists them ({@code
 * claude-code@2.1.328,codex@0.169.0,qwen-code@0.24.4}, written by {@code
 * docker/job-image/build.sh}), and whether a job's agent can run on this runner. Plain data: the
 * caller reads the label.
 */
record InstalledAgents(Map<String, String> versions) {

  /** The image label listing the CLIs and their versions. */
  static final String LABEL = "spb.agent.clis";

  /**
   * The version reported for {@link CodingAgent#BUILTIN}: the runner's (the jar is built with it).
   */
  static final String BUILTIN_VERSION =
      InstalledAgents.class.getPackage().getImplementationVersion() == null
          ? "builtin"
          : InstalledAgents.class.getPackage().getImplementationVersion();

  InstalledAgents {
    // In the label's order, for the refusal's list.
    versions = Collections.unmodifiableMap(new LinkedHashMap<>(versions));
  }

  /** Parses the label's value; null or blank (an image built before agents) means none. */
  static InstalledAgents fromLabel(String label) {
    Map<String, String> versions = new LinkedHashMap<>();
    if (label != null) {
      for (String item : label.split(",")) {
        int at = item.lastIndexOf('@');
        if (at > 0 && at < item.length() - 1) {
          versions.put(item.substring(0, at).strip(), item.substring(at + 1).strip());
        }
      }
    }
    return new InstalledAgents(versions);
  }

  /** The version of {@code agent} in the image; null when the image does not carry it. */
  String version(CodingAgent agent) {
    return agent == CodingAgent.BUILTIN ? BUILTIN_VERSION : versions.get(agent.id());
  }

  /**
   * Why {@code agent} cannot run in {@code image} on a runner whose provider is {@code provider},
   * or null when it can: the built-in agent runs anywhere, a CLI needs its entry in the label and a
   * provider whose API it speaks.
   */
  String refusal(CodingAgent agent, String image, String provider) {
    if (agent == CodingAgent.BUILTIN) {
      return null;
    }
    if (!agent.speaks(provider)) {
      return "agent "
          + agent.id()
          + " speaks the "
          + String.join("/", agent.providers())
          + " API, but this runner's model provider (SPB_MODEL_PROVIDER) is "
          + provider;
    }
    if (version(agent) == null) {
      return "image "
          + image
          + " does not carry agent "
          + agent.id()
          + (versions.isEmpty()
              ? " (it has no " + LABEL + " label: rebuild it with docker/job-image/build.sh)"
              : " (its " + LABEL + " label lists " + String.join(", ", versions.keySet()) + ")");
    }
    return null;
  }
}
