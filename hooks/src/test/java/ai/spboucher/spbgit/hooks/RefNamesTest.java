package ai.spboucher.spbgit.hooks;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class RefNamesTest {

  @ParameterizedTest
  @ValueSource(
      strings = {
        "refs/heads/main",
        "refs/agents/abc/proposal",
        "refs/agents/abc/x/y",
        "refs/tags/v1.0",
        "refs/heads/feature-1_2",
        "refs/heads/é",
        "refs/heads/a.b",
        "refs/heads/x@y",
        "refs/heads/a-lock"
      })
  void acceptsValidNames(String name) {
    assertEquals(Optional.empty(), RefNames.problemWith(name));
  }

  @ParameterizedTest
  @CsvSource(
      delimiter = '|',
      quoteCharacter = '"',
      value = {
        "refs/agents/abc/../heads/main | contains '..'",
        "refs/agents/abc/a..b          | contains '..'",
        "refs/agents/abc/x@{1}         | contains '@{'",
        "refs/agents/abc/a b           | contains ' '",
        "refs/agents/abc/a~1           | contains '~'",
        "refs/agents/abc/a^            | contains '^'",
        "refs/agents/abc/a:b           | contains ':'",
        "refs/agents/abc/a?            | contains '?'",
        "refs/agents/abc/a*            | contains '*'",
        "refs/agents/abc/a[b           | contains '['",
        "refs/agents/abc/a\\b          | contains '\\'",
        "refs/agents/abc/x.lock        | component ending in .lock",
        "refs/agents/abc/x.lock/y      | component ending in .lock",
        "refs/agents/abc/              | empty component",
        "refs/agents/abc//x            | empty component",
        "refs/agents/abc/x.            | component starting or ending with '.'",
        "refs/agents/abc/.x            | component starting or ending with '.'",
        "refs/agents/abc/x/.y          | component starting or ending with '.'",
        "HEAD                          | does not start with refs/",
        "main                          | does not start with refs/",
        "/refs/heads/main              | does not start with refs/",
      })
  void namesTheRuleABadNameBreaks(String name, String reason) {
    assertProblem(name, reason);
  }

  @ParameterizedTest
  @ValueSource(chars = {'\n', '\t', '\r', '\u0000', '\u0001', '\u001b', '\u007f'})
  void refusesControlCharacters(char c) {
    assertProblem("refs/agents/abc/a" + c + "b", "control character");
  }

  @Test
  void refusesEmptyAndNullNames() {
    assertProblem("", "empty ref name");
    assertProblem(null, "empty ref name");
  }

  /**
   * Found by RefNamesFuzzTest: JGit writes an unpaired surrogate as '?', which is not the name that
   * was checked.
   */
  @ParameterizedTest
  @ValueSource(
      strings = {
        "refs/agents/abc/x\ud800",
        "refs/agents/abc/\udc00x",
        "refs/agents/abc/\ude00\ud83d"
      })
  void refusesUnpairedSurrogates(String name) {
    assertProblem(name, "not valid Unicode");
  }

  @Test
  void acceptsCharactersOutsideTheBasicPlane() {
    assertEquals(Optional.empty(), RefNames.problemWith("refs/agents/abc/\ud83d\ude00"));
  }

  @Test
  void refusesOverlongNames() {
    assertProblem("refs/agents/abc/" + "x".repeat(1024), "longer than 1024");
  }

  private static void assertProblem(String name, String reason) {
    Optional<String> problem = RefNames.problemWith(name);
    assertTrue(problem.isPresent(), () -> "accepted " + name);
    assertTrue(
        problem.get().contains(reason),
        () -> "expected '" + reason + "' for " + name + ", got: " + problem.get());
  }
}
