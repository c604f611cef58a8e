package ai.spboucher.spbgit.gateway.audit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.spboucher.spbgit.proto.AuditChain;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The chain check a verifier away from the gateway runs ({@link AuditChain#checkServed}) against
 * lines written by the gateway's own {@link AuditLog} and served as its API serves them with {@code
 * format=lines}: the stored lines themselves, hashed as they are, whatever characters the entries
 * hold.
 */
class AuditLinesTest {

  @TempDir Path tmp;

  private List<byte[]> servedLines(int count) throws Exception {
    try (AuditLog log = AuditLog.open(tmp.resolve("agent-jobs.jsonl"), Clock.systemUTC())) {
      for (int i = 0; i < count; i++) {
        log.append(
            new JsonObject()
                .put("event", i % 2 == 0 ? "job_created" : "job_finished")
                .put("job", "j" + i)
                .put("repo", "demo")
                .put(
                    "task",
                    "Grüße, 日本語, emoji 😀, quotes \" and \\ and / and <script>, controls \u0001\n\t\u001b[31m")
                .put("exec", "echo 'x' > \"y\"")
                .put("provider", null)
                .put("ok", i % 3 == 0)
                .put("count", 1L << 40)
                .put("ratio", 0.1 * i)
                .put(
                    "refs",
                    new JsonArray()
                        .add(
                            new JsonObject()
                                .put("ref", "refs/agents/j/p")
                                .put("new", "0".repeat(40)))));
      }
      AuditChain.Result verified = log.verify();
      assertTrue(verified.ok(), verified.message());
      List<byte[]> lines = new ArrayList<>();
      log.lines(entry -> true).forEach(line -> lines.add(line.getBytes(StandardCharsets.UTF_8)));
      return lines;
    }
  }

  private static byte[] edited(byte[] line, String from, String to) {
    String text = new String(line, StandardCharsets.UTF_8);
    assertTrue(text.contains(from), text);
    return text.replace(from, to).getBytes(StandardCharsets.UTF_8);
  }

  @Test
  void linesTheGatewayWroteVerify() throws Exception {
    AuditChain.Result result = AuditChain.checkServed(servedLines(6), true);
    assertNull(result.problem());
    assertEquals(6, result.lines());
    assertEquals(6, result.linksChecked());
  }

  @Test
  void anEditedEntryBreaksTheNextLink() throws Exception {
    List<byte[]> lines = servedLines(4);
    lines.set(1, edited(lines.get(1), "echo 'x'", "something else"));
    assertEquals(
        "seq 3: prev does not match the hash of seq 2",
        AuditChain.checkServed(lines, true).problem());
  }

  @Test
  void aReEncodedEntryIsNotTheLineThatWasHashed() throws Exception {
    List<byte[]> lines = servedLines(3);
    // The same JSON value with its members reordered: equal as data, but not the bytes the chain
    // was built from.
    JsonObject entry = new JsonObject(new String(lines.get(0), StandardCharsets.UTF_8));
    JsonObject reordered = new JsonObject().put("event", entry.getValue("event"));
    entry.forEach(field -> reordered.put(field.getKey(), field.getValue()));
    lines.set(0, reordered.encode().getBytes(StandardCharsets.UTF_8));
    assertEquals(
        "seq 2: prev does not match the hash of seq 1",
        AuditChain.checkServed(lines, true).problem());
  }

  @Test
  void aMissingEntryIsAGapInTheWholeLog() throws Exception {
    List<byte[]> lines = servedLines(4);
    lines.remove(2);
    assertTrue(AuditChain.checkServed(lines, true).problem().startsWith("seq jumps from 2 to 4"));
  }

  @Test
  void reorderedEntriesAreReported() throws Exception {
    List<byte[]> lines = servedLines(3);
    lines.add(lines.remove(0));
    assertTrue(AuditChain.checkServed(lines, false).problem().contains("out of order"));
  }

  @Test
  void aFilteredListChecksOnlyAdjacentLinks() throws Exception {
    List<byte[]> lines = servedLines(5);
    List<byte[]> filtered = List.of(lines.get(0), lines.get(1), lines.get(3));
    AuditChain.Result result = AuditChain.checkServed(filtered, false);
    assertNull(result.problem());
    assertEquals(2, result.linksChecked(), "seq 1 (genesis) and 1->2; 4 has no neighbour");
  }

  @Test
  void aForgedFirstEntryIsReported() throws Exception {
    List<byte[]> lines = servedLines(1);
    lines.set(
        0, edited(lines.get(0), "\"prev\":\"" + "0".repeat(64), "\"prev\":\"" + "1".repeat(64)));
    assertEquals("seq 1: prev is not 64 zeros", AuditChain.checkServed(lines, true).problem());
  }
}
