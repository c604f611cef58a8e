package ai.spboucher.spbgit.cli.audit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.spboucher.spbgit.gateway.jobs.AuditLog;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The chain check against entries written by the gateway's own {@link AuditLog} and served the way its API
 * serves them (a Vert.x {@link JsonArray} of the parsed lines), so that the re-encoding is tested for real.
 */
class AuditChainTest {

  private static final ObjectMapper JSON = new ObjectMapper();

  @TempDir
  Path tmp;

  private List<JsonNode> servedEntries(int count) throws Exception {
    try (AuditLog log = AuditLog.open(tmp.resolve("agent-jobs.jsonl"), Clock.systemUTC())) {
      for (int i = 0; i < count; i++) {
        log.append(new JsonObject().put("event", i % 2 == 0 ? "job_created" : "job_finished").put("job", "j" + i)
            .put("repo", "demo")
            .put("task", "Grüße, 日本語, emoji 😀, quotes \" and \\ and / and <script>, controls \u0001\n\t\u001b[31m")
            .put("exec", "echo 'x' > \"y\"").put("provider", null).put("ok", i % 3 == 0).put("count", 1L << 40)
            .put("ratio", 0.1 * i).put("refs", new JsonArray().add(new JsonObject().put("ref", "refs/agents/j/p")
                .put("new", "0".repeat(40)))));
      }
      AuditLog.VerifyResult verified = log.verify();
      assertTrue(verified.ok(), verified.message());
      String served = new JsonArray(new ArrayList<>(log.entries())).encode();
      List<JsonNode> entries = new ArrayList<>();
      JSON.readTree(served).forEach(entries::add);
      return entries;
    }
  }

  @Test
  void entriesTheGatewayWroteVerify() throws Exception {
    AuditChain.Result result = AuditChain.check(servedEntries(6), true);
    assertNull(result.problem());
    assertEquals(6, result.entries());
    assertEquals(6, result.linksChecked());
  }

  @Test
  void anEditedEntryBreaksTheNextLink() throws Exception {
    List<JsonNode> entries = servedEntries(4);
    ((ObjectNode) entries.get(1)).put("exec", "something else");
    assertEquals("seq 3: prev does not match the hash of seq 2", AuditChain.check(entries, true).problem());
  }

  @Test
  void aMissingEntryIsAGapInTheWholeLog() throws Exception {
    List<JsonNode> entries = servedEntries(4);
    entries.remove(2);
    assertTrue(AuditChain.check(entries, true).problem().startsWith("seq jumps from 2 to 4"));
  }

  @Test
  void reorderedEntriesAreReported() throws Exception {
    List<JsonNode> entries = servedEntries(3);
    entries.add(entries.remove(0));
    assertTrue(AuditChain.check(entries, false).problem().contains("out of order"));
  }

  @Test
  void aFilteredListChecksOnlyAdjacentLinks() throws Exception {
    List<JsonNode> entries = servedEntries(5);
    List<JsonNode> filtered = List.of(entries.get(0), entries.get(1), entries.get(3));
    AuditChain.Result result = AuditChain.check(filtered, false);
    assertNull(result.problem());
    assertEquals(2, result.linksChecked(), "seq 1 (genesis) and 1->2; 4 has no neighbour");
  }

  @Test
  void aForgedFirstEntryIsReported() throws Exception {
    List<JsonNode> entries = servedEntries(1);
    ((ObjectNode) entries.get(0)).put("prev", "1".repeat(64));
    assertEquals("seq 1: prev is not 64 zeros", AuditChain.check(entries, true).problem());
  }
}
