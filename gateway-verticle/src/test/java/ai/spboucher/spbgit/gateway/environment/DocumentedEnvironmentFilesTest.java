package ai.spboucher.spbgit.gateway.environment;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * The {@code .spbgit/agent.yml} examples README and docs/environments.md show parse as the gateway
 * parses the file, and there is one for a Python and one for a Node project with every key an owner
 * needs: a documented example the parser refuses would be the first thing a new repository copies.
 */
class DocumentedEnvironmentFilesTest {

  private static final Path ENVIRONMENTS_MD = Path.of("..", "docs", "environments.md");
  private static final Path README = Path.of("..", "README.md");
  private static final Pattern YAML_BLOCK = Pattern.compile("(?ms)^```yaml\\n(.*?)^```");

  @Test
  void everyYamlBlockOfTheEnvironmentsSectionParses() throws IOException {
    List<String> blocks = yamlBlocks(environmentsGuide());
    assertFalse(blocks.isEmpty(), "no yaml example in docs/environments.md");
    for (String block : blocks) {
      AgentEnvironment env = EnvironmentFile.parse(block, "docs");
      assertFalse(env.setup().isBlank(), "an example without setup:\n" + block);
    }
  }

  @Test
  void thePythonAndNodeExamplesSetUpCacheAndTest() throws IOException {
    Map<String, AgentEnvironment> byImage =
        yamlBlocks(environmentsGuide()).stream()
            .map(block -> EnvironmentFile.parse(block, "docs"))
            .collect(Collectors.toMap(AgentEnvironment::image, env -> env, (a, b) -> a));
    for (String image : List.of("python", "node")) {
      AgentEnvironment env = byImage.get(image);
      assertTrue(env != null, "docs/environments.md shows no " + image + " environment");
      assertFalse(env.setupEgress().isEmpty(), image + ": setup_egress");
      assertEquals(List.of(), env.egress(), image + ": the agent phase gets no network");
      assertFalse(env.cache().isEmpty(), image + ": cache");
      assertFalse(env.cacheKeyFiles().isEmpty(), image + ": cache_key_files");
      assertFalse(env.test().isBlank(), image + ": test");
    }
  }

  @Test
  void theReadmesExamplesParseAndAreTheGuidesOwn() throws IOException {
    List<String> readme = yamlBlocks(Files.readString(README));
    List<String> guide = yamlBlocks(environmentsGuide());
    assertEquals(2, readme.size(), "README shows a Python and a Node agent.yml");
    for (String block : readme) {
      EnvironmentFile.parse(block, "readme");
      assertTrue(
          guide.contains(block), "README's example differs from docs/environments.md's:\n" + block);
    }
  }

  private static String environmentsGuide() throws IOException {
    return Files.readString(ENVIRONMENTS_MD);
  }

  private static List<String> yamlBlocks(String markdown) {
    List<String> blocks = new ArrayList<>();
    Matcher m = YAML_BLOCK.matcher(markdown);
    while (m.find()) {
      blocks.add(m.group(1));
    }
    return blocks;
  }
}
