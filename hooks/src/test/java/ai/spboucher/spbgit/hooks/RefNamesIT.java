package ai.spboucher.spbgit.hooks;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * {@link RefNames} against the real {@code git check-ref-format}: it may be stricter than git,
 * never laxer.
 */
class RefNamesIT {

  private static final List<String> NAMES =
      List.of(
          "refs/heads/main",
          "refs/agents/abc/proposal",
          "refs/agents/abc/x/y",
          "refs/tags/v1.0",
          "refs/heads/é",
          "refs/heads/a.b",
          "refs/heads/x@y",
          "refs/heads/@",
          "refs/heads/a-lock",
          "refs/heads/lock.",
          "refs/heads/-x",
          "refs/heads/x.lock",
          "refs/heads/x.lock/y",
          "refs/heads/.x",
          "refs/heads/x.",
          "refs/heads/x/",
          "refs/heads//x",
          "refs/heads/a..b",
          "refs/heads/../x",
          "refs/heads/x@{1}",
          "refs/heads/@{",
          "refs/heads/a b",
          "refs/heads/a~1",
          "refs/heads/a^",
          "refs/heads/a:b",
          "refs/heads/a?",
          "refs/heads/a*",
          "refs/heads/a[b",
          "refs/heads/a\\b",
          "refs/heads/a\nb",
          "refs/heads/a\tb",
          "refs/heads/a\rb",
          "refs/heads/a\u0001b",
          "refs/heads/a\u007fb",
          "refs/heads/a\u00a0b",
          "refs/heads/a{b}",
          "refs/heads/a]b",
          "refs/heads/a!b",
          "refs/heads/a'b",
          "refs/heads/a\"b",
          "refs/heads/a;b",
          "refs/heads/a|b",
          "refs/heads/a$b",
          "refs/heads/a%b",
          "refs/heads/a#b",
          "refs/heads/a=b",
          "refs",
          "refs/",
          "refs/x",
          "refs/.x",
          "refs/heads/.",
          "refs/heads/..",
          "HEAD",
          "main",
          "/refs/heads/x",
          "");

  @Test
  void neverAcceptsANameGitRefuses() throws Exception {
    List<String> laxer = new ArrayList<>();
    for (String name : NAMES) {
      boolean gitAccepts = gitAccepts(name);
      if (RefNames.problemWith(name).isEmpty() && !gitAccepts) {
        laxer.add(name);
      }
    }
    assertEquals(List.of(), laxer, "names RefNames accepts but git check-ref-format refuses");
  }

  @Test
  void agreesWithGitOnOrdinaryNames() throws Exception {
    for (String name : List.of("refs/heads/main", "refs/agents/abc/x/y", "refs/tags/v1.0")) {
      assertTrue(gitAccepts(name), name);
      assertTrue(RefNames.problemWith(name).isEmpty(), name);
    }
  }

  private static boolean gitAccepts(String name) throws IOException, InterruptedException {
    Process process =
        new ProcessBuilder("git", "check-ref-format", name).redirectErrorStream(true).start();
    process.getOutputStream().close();
    process.getInputStream().readAllBytes();
    assertTrue(process.waitFor(30, TimeUnit.SECONDS), "git check-ref-format did not finish");
    return process.exitValue() == 0;
  }
}
