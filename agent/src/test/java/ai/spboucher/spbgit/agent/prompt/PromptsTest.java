package ai.spboucher.spbgit.agent.prompt;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class PromptsTest {

  @Test
  void theFirstMessageDelimitsTheTaskAsData() {
    String message = Prompts.task("Add a greeting", "mvn -q test");

    assertTrue(message.contains("<task>\nAdd a greeting\n</task>"));
    assertTrue(message.contains("data written by the owner"));
    assertTrue(message.contains("<test_command>\nmvn -q test\n</test_command>"));
    assertFalse(Prompts.task("x", "").contains("test_command"));
  }
}
