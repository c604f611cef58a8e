package ai.spboucher.spbgit.gateway.environment;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class EnvironmentFileTest {

  private static final String PYTHON =
      """
      # A Python project: dependencies from a mirror during setup, none during the agent phase.
      image: python
      setup: |
        python3 -m venv /work/.venv
        /work/.venv/bin/pip install -r requirements.txt
      setup_egress:
        - pypi.mirror.example:443
        - 10.1.2.3:8080
      cache: [/work/.venv]
      cache_key_files: [requirements.txt]
      test: /work/.venv/bin/pytest -q
      """;

  private static EnvironmentFileException refused(String yaml) {
    return assertThrows(EnvironmentFileException.class, () -> EnvironmentFile.parse(yaml, "b"));
  }

  @Test
  void readsEveryKey() {
    AgentEnvironment env = EnvironmentFile.parse(PYTHON, "abc");

    assertEquals("python", env.image());
    assertEquals(
        "python3 -m venv /work/.venv\n/work/.venv/bin/pip install -r requirements.txt\n",
        env.setup());
    assertEquals(List.of("pypi.mirror.example:443", "10.1.2.3:8080"), env.setupEgress());
    assertEquals(List.of(), env.egress());
    assertEquals(List.of("/work/.venv"), env.cache());
    assertEquals(List.of("requirements.txt"), env.cacheKeyFiles());
    assertEquals("/work/.venv/bin/pytest -q", env.test());
    assertEquals("abc", env.blob());
  }

  @Test
  void anEmptyFileIsTheDefaultEnvironment() {
    AgentEnvironment env = EnvironmentFile.parse("# nothing yet\n", "b");
    assertEquals(AgentEnvironment.NONE.hash(), env.hash());
    assertEquals("base", env.image());
  }

  @Test
  void theHashFollowsTheContentNotTheFormatting() {
    String same = PYTHON.replace("cache: [/work/.venv]", "cache:\n  - /work/.venv\n# a comment");
    assertEquals(
        EnvironmentFile.parse(PYTHON, "a").hash(), EnvironmentFile.parse(same, "b").hash());
    assertNotEquals(
        EnvironmentFile.parse(PYTHON, "a").hash(),
        EnvironmentFile.parse(PYTHON.replace("10.1.2.3:8080", "10.1.2.3:8081"), "a").hash());
  }

  @Test
  void hostsAreMadeCanonical() {
    AgentEnvironment env =
        EnvironmentFile.parse("egress: [Registry.NPMJS.org:443, registry.npmjs.org:0443]\n", "b");
    assertEquals(List.of("registry.npmjs.org:443"), env.egress());
  }

  @ParameterizedTest
  @CsvSource(
      delimiter = '|',
      value = {
        "imagee: python                    | 1 | 'imagee' is not a known key",
        "image: Python                     | 1 | 'image' must be a catalogue name",
        "image: python.3                   | 1 | 'image' must be a catalogue name",
        "image: [python]                   | 1 | 'image' must be a string",
        "test: echo\\nsetup_egress: x:443   | 2 | 'setup_egress' must be a list",
        "setup_egress:\\n  - host          | 2 | 'setup_egress' entry 'host' must be host:port",
        "setup_egress:\\n  - host:99999    | 2 | 'setup_egress' entry 'host:99999' has no port between 1 and 65535",
        "egress:\\n  - a_b.example:443     | 2 | 'egress' entry 'a_b.example:443' has a host that is neither",
        "egress:\\n  - 'http://x:443'      | 2 | has a host that is neither",
        "cache: [/tmp/x]                   | 1 | 'cache' entry '/tmp/x' must be an absolute path under /work",
        "cache: [/work]                    | 1 | must be an absolute path under /work",
        "cache: [/work/../etc]             | 1 | must be an absolute path under /work",
        "cache_key_files: [../x]           | 1 | 'cache_key_files' entry '../x' must be a path inside the repository",
        "cache_key_files: [/etc/passwd]    | 1 | must be a path inside the repository",
        "setup: [a, b]                     | 1 | 'setup' must be a string",
        "- image                           | 1 | must be a mapping of keys",
        "image: base\\nimage: python       | 2 | 'image' appears twice",
        "image: 'unclosed                  | 1 | is not valid YAML",
      })
  void refusesWithTheKeyAndLine(String yaml, int line, String message) {
    EnvironmentFileException e = refused(yaml.replace("\\n", "\n"));
    assertEquals(line, e.line(), e.getMessage());
    assertTrue(e.getMessage().startsWith(".spbgit/agent.yml line " + line + ": "), e.getMessage());
    assertTrue(e.getMessage().contains(message), e.getMessage());
  }

  @Test
  void refusesAliasesSoNoBillionLaughs() {
    String laughs =
        "a: &a [x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a]\n"
            + "c: [*b, *b, *b, *b, *b, *b, *b, *b]\n";
    assertTrue(refused(laughs).getMessage().contains("not valid YAML"));
  }

  @Test
  void refusesLocalTagsAndOversizedParts() {
    assertTrue(
        refused("image: !custom python\n").getMessage().contains("must not carry a YAML tag"));
    assertTrue(
        refused("setup: " + "x".repeat(EnvironmentFile.MAX_SETUP + 1) + "\n")
            .getMessage()
            .contains("'setup' is longer than"));
    assertTrue(
        refused("#" + "x".repeat(EnvironmentFile.MAX_BYTES))
            .getMessage()
            .contains("is larger than 64 KiB"));
    StringBuilder many = new StringBuilder("egress:\n");
    for (int i = 0; i <= EnvironmentFile.MAX_HOSTS; i++) {
      many.append("  - h").append(i).append(".example:443\n");
    }
    assertTrue(refused(many.toString()).getMessage().contains("has more than 32 entries"));
  }
}
