package ai.spboucher.spbgit.cli.commands;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.List;
import org.junit.jupiter.api.Test;

class EnvironmentReportTest {

  private static final ObjectMapper JSON = new ObjectMapper();

  private static JsonNode json(String text) throws Exception {
    return JSON.readTree(text.replace('\'', '"'));
  }

  @Test
  void printsEachFieldAndTheSetupScriptLineByLineWithoutTheFilesEscapes() throws Exception {
    JsonNode answer =
        json(
            "{'path': '.spbgit/agent.yml', 'branch': 'main', 'blob': 'b10b', 'environment': {"
                + "'image': 'python', 'setup': 'python3 -m venv /work/.venv\\n\\u001b]0;evil\\u0007pip install -r r.txt\\n',"
                + "'setup_egress': ['pypi.org:443', 'files.pythonhosted.org:443'], 'egress': [], 'cache': ['/work/.venv'],"
                + "'cache_key_files': ['r.txt'], 'test': 'pytest -q', 'hash': 'abc'}}");
    assertEquals(
        List.of(
            "file:         .spbgit/agent.yml on main (blob b10b)",
            "image:        python",
            "setup:",
            "  python3 -m venv /work/.venv",
            "  pip install -r r.txt",
            "setup egress: pypi.org:443, files.pythonhosted.org:443",
            "egress:       none",
            "cache:        /work/.venv",
            "cache keys:   r.txt",
            "test:         pytest -q",
            "hash:         abc"),
        EnvironmentReport.lines(answer));
    assertNull(EnvironmentReport.error(answer));
  }

  @Test
  void aMissingFileShowsTheDefaults() throws Exception {
    JsonNode answer =
        json(
            "{'path': '.spbgit/agent.yml', 'branch': 'main', 'blob': null, 'environment': {"
                + "'image': 'base', 'setup': '', 'setup_egress': [], 'egress': [], 'cache': [], 'cache_key_files': [],"
                + "'test': '', 'hash': 'h'}}");
    List<String> lines = EnvironmentReport.lines(answer);
    assertEquals("file:         none on main: the defaults", lines.get(0));
    assertEquals("setup:        none", lines.get(2));
  }

  @Test
  void aBadFileIsOneLine() throws Exception {
    JsonNode answer =
        JSON.readTree(
            "{\"path\": \".spbgit/agent.yml\", \"branch\": \"main\", \"blob\": \"b10b\", "
                + "\"error\": \".spbgit/agent.yml line 3: 'setup_egress' must be a list\\n\\u001b[2J\", \"line\": 3}");
    assertEquals(
        ".spbgit/agent.yml line 3: 'setup_egress' must be a list  (on main, blob b10b)",
        EnvironmentReport.error(answer));
  }

  @Test
  void summarisesAJobsEnvironmentInOneLine() throws Exception {
    assertEquals(
        "python (sha256:ab), cache hit, hash 0123456789ab",
        EnvironmentReport.summary(
            json(
                "{'environment': {'image': 'python', 'hash': '0123456789abcdef'}, 'image_digest': 'sha256:ab',"
                    + " 'cache': 'hit'}")));
    assertEquals("base, cache -", EnvironmentReport.summary(json("{'environment': null}")));
  }
}
