package ai.spboucher.spbgit.hooks;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class RefScopeTest {

  private final RefScope scope = RefScope.forJob("abc");

  @ParameterizedTest
  @ValueSource(
      strings = {
        "refs/agents/abc/proposal",
        "refs/agents/abc/x/y",
        "refs/agents/abc/HEAD",
        "refs/agents/abc/feature-1.2",
        "refs/agents/abc/é"
      })
  void admitsRefsBelowTheJobPrefix(String ref) {
    assertEquals(Optional.empty(), scope.refusalFor(ref));
    assertTrue(scope.admitsRef(ref));
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "refs/agents/abc",
        "refs/agents/abcd/x",
        "refs/agents/ab/x",
        "refs/agents/ab",
        "refs/agents/other/x",
        "refs/agents/ABC/x",
        "refs/heads/main",
        "refs/tags/v1",
        "refs/heads/refs/agents/abc/x",
        "refs/agents-abc/x"
      })
  void refusesRefsOutsideTheJobPrefix(String ref) {
    assertRefused(ref, "outside the job's scope");
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "refs/agents/abc/",
        "refs/agents/abc/../heads/main",
        "refs/agents/abc/a..b",
        "refs/agents/abc/x@{1}",
        "refs/agents/abc/a\nb",
        "refs/agents/abc/a\tb",
        "refs/agents/abc/a\u0001b",
        "refs/agents/abc/a\u007fb",
        "refs/agents/abc/a b",
        "refs/agents/abc/a~1",
        "refs/agents/abc/a^",
        "refs/agents/abc/a:b",
        "refs/agents/abc/a?",
        "refs/agents/abc/a*",
        "refs/agents/abc/a[b",
        "refs/agents/abc/a\\b",
        "refs/agents/abc/x.lock",
        "refs/agents/abc/x.lock/y",
        "refs/agents/abc/x.",
        "refs/agents/abc/.x",
        "refs/agents/abc/x/.y",
        "refs/agents/abc//x",
        "HEAD",
        ""
      })
  void refusesInvalidRefNamesEvenInsideThePrefix(String ref) {
    Optional<String> refusal = scope.refusalFor(ref);

    assertTrue(refusal.isPresent(), () -> "admitted " + ref);
    assertEquals(
        RefNames.problemWith(ref).get() + "; job tokens may only push refs/agents/abc/*",
        refusal.get());
    assertFalse(scope.admitsRef(ref));
  }

  @Test
  void refusesNull() {
    assertFalse(scope.admitsRef(null));
  }

  @ParameterizedTest
  @ValueSource(strings = {"../x", "A B", "Abc", "", "-abc", "a/b", "a.b", "a_b", "abc\n", "é"})
  void rejectsJobIdsThatAreNotRefSafe(String jobId) {
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> RefScope.forJob(jobId));
    assertTrue(e.getMessage().contains("invalid job id"));
  }

  @Test
  void rejectsNullAndOverlongJobIds() {
    assertThrows(IllegalArgumentException.class, () -> RefScope.forJob(null));
    assertThrows(IllegalArgumentException.class, () -> RefScope.forJob("a".repeat(65)));
    assertEquals("a".repeat(64), RefScope.forJob("a".repeat(64)).jobId());
  }

  @Test
  void writesTheGlobIntoTokensAndRefusals() {
    assertEquals("refs/agents/abc/*", scope.glob());
    assertEquals("refs/agents/abc/*", scope.toString());
    assertEquals(scope, RefScope.forJob("abc"));
    assertEquals(scope.hashCode(), RefScope.forJob("abc").hashCode());
    assertFalse(scope.equals(RefScope.forJob("abcd")));
  }

  private void assertRefused(String ref, String reason) {
    Optional<String> refusal = scope.refusalFor(ref);
    assertTrue(refusal.isPresent(), () -> "admitted " + ref);
    assertTrue(refusal.get().contains(reason), refusal::get);
    assertTrue(refusal.get().endsWith("job tokens may only push refs/agents/abc/*"), refusal::get);
    assertFalse(scope.admitsRef(ref));
  }
}
