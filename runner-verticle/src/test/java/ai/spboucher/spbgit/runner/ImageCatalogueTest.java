package ai.spboucher.spbgit.runner;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ImageCatalogueTest {

  @Test
  void defaultsToTheAgentImageAsBaseAndItsBuiltVariantsIfPresent() {
    ImageCatalogue catalogue = ImageCatalogue.parse("", "spbgit/agent:latest");
    assertEquals(
        List.of(
            new ImageCatalogue.Entry("base", "spbgit/agent:latest", true),
            new ImageCatalogue.Entry("python", "spbgit/agent-python:latest", false),
            new ImageCatalogue.Entry("node", "spbgit/agent-node:latest", false)),
        catalogue.entries());
    Map<String, String> ids =
        Map.of("spbgit/agent:latest", "sha256:b", "spbgit/agent-node:latest", "sha256:n");
    assertEquals(
        List.of("base", "node"),
        List.copyOf(catalogue.offer(ids::get).keySet()),
        "a variant not built here is not offered");
    assertEquals("sha256:n", catalogue.offer(ids::get).get("node").digest());
    assertThrows(
        IllegalStateException.class,
        () -> catalogue.offer(Map.of("spbgit/agent-node:latest", "x")::get),
        "base is required");
    assertEquals(
        "registry:5000/agent-python:1",
        ImageCatalogue.variantOf("registry:5000/agent:1", "python"));
    assertEquals("agent-node", ImageCatalogue.variantOf("agent", "node"));
  }

  @Test
  void readsSpbImagesAndRequiresEveryImageItNames() {
    ImageCatalogue catalogue =
        ImageCatalogue.parse(
            "python=spbgit/agent-python:latest, java=corp/java@sha256:ab", "ignored");
    assertEquals(
        List.of(
            new ImageCatalogue.Entry("python", "spbgit/agent-python:latest", true),
            new ImageCatalogue.Entry("java", "corp/java@sha256:ab", true)),
        catalogue.entries());
    assertThrows(
        IllegalStateException.class,
        () -> catalogue.offer(Map.of("spbgit/agent-python:latest", "sha256:p")::get));
  }

  @Test
  void refusesNamesThatAreNoSubjectTokenAndMalformedEntries() {
    for (String bad :
        List.of(
            "py.3=x",
            "a*=x",
            "Python=x",
            "=x",
            "python=",
            "python",
            "a=b,a=c",
            "a=b c=d e",
            "a=$(x)")) {
      assertThrows(IllegalArgumentException.class, () -> ImageCatalogue.parse(bad, "x"), bad);
    }
    assertThrows(
        IllegalArgumentException.class,
        () ->
            RunnerConfig.from(
                RunnerConfig.fromEnvironment(
                    Map.of("SPB_RUNNER_ID", "r", "SPB_IMAGES", "py.3=x"))));
  }
}
