package ai.spboucher.spbgit.testsupport;

import ai.spboucher.spbgit.testsupport.FakeProvider.Call;
import ai.spboucher.spbgit.testsupport.FakeProvider.Usage;
import java.util.List;

/**
 * One model turn of a {@link FakeProvider}'s script, rendered in whichever API and mode the request
 * asked for (a {@link WireFormat}): text, tool calls (run in parallel by the caller), or both; a
 * {@code truncated} turn was cut off at the output token limit.
 */
record ScriptedTurn(String text, List<Call> calls, boolean truncated, Usage usage) {

  boolean callsTool() {
    return !calls.isEmpty();
  }
}
