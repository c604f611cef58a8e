package ai.spboucher.spbgit.gateway.review;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.spboucher.spbgit.gateway.errors.RequestException;
import org.junit.jupiter.api.Test;

class NewCommentTest {

  @Test
  void acceptsASummaryAndALineCommentOnEitherSide() {
    new NewComment("fine", null, null, null, null).check();
    new NewComment("x", "a.txt", "old", 3, "0".repeat(40)).check();
    assertEquals("new", new NewComment("x", "a.txt", null, 1, null).sideOrDefault());
  }

  @Test
  void countsTheLimitInUtf8Bytes() {
    new NewComment("a".repeat(NewComment.MAX_BODY_BYTES), null, null, null, null).check();
    var tooLarge =
        assertThrows(
            RequestException.TooLarge.class,
            () -> new NewComment("é".repeat(4097), null, null, null, null).check());
    assertTrue(tooLarge.getMessage().contains("8194 bytes"), tooLarge.getMessage());
  }

  @Test
  void refusesAnIncompleteOrMalformedPlace() {
    for (NewComment bad :
        new NewComment[] {
          new NewComment(" ", null, null, null, null),
          new NewComment("x", "a.txt", null, null, null),
          new NewComment("x", null, null, 2, null),
          new NewComment("x", "a.txt", "left", 2, null),
          new NewComment("x", "a.txt", "new", 0, null),
          new NewComment("x", null, "new", null, null),
          new NewComment("x", null, null, null, "HEAD"),
        }) {
      assertThrows(RequestException.Invalid.class, bad::check, bad.toString());
    }
  }
}
