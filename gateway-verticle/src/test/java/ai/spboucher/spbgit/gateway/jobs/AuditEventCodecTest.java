package ai.spboucher.spbgit.gateway.jobs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.vertx.core.json.JsonObject;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Audit lines read into events and written back; {@link AuditLogReplayTest} covers every event. */
class AuditEventCodecTest {

  private static final String PREV = "0".repeat(64);

  @Test
  void anEventItDoesNotKnowIsKeptAsItWasRead() {
    String line =
        "{\"seq\":1,\"ts\":\"2026-12-01T10:00:00Z\",\"prev\":\""
            + PREV
            + "\",\"event\":\"torn_line_set_aside\",\"file\":\"x.torn-1\",\"bytes\":12}";
    AuditEventCodec.Entry entry = AuditEventCodec.decode(line);
    OtherEvent other = assertInstanceOf(OtherEvent.class, entry.event());
    assertNull(other.job());
    assertEquals(line, AuditEventCodec.encodeLine(entry));
    assertFalse(JobBook.replay(List.of(new JsonObject(line))).get("x").isPresent());
  }

  @Test
  void anEndWithoutSpendOrSetupFactsWritesNoneOfTheirFields() {
    JobFinished end = new JobFinished("j", "ok", "r", "c", null, null, null, null);
    assertEquals(
        "{\"event\":\"job_finished\",\"job\":\"j\",\"exit_reason\":\"ok\",\"runner\":\"r\","
            + "\"container\":\"c\",\"detail\":null}",
        AuditEventCodec.encode(end).encode());
    assertEquals(end, AuditEventCodec.event(AuditEventCodec.encode(end)));
  }

  @Test
  void aSpendOfAnOlderLogWithoutTokensReadsAsZeroTokens() {
    JobFinished end =
        (JobFinished)
            AuditEventCodec.event(
                new JsonObject()
                    .put("event", "job_finished")
                    .put("job", "j")
                    .put("provider", "openai"));
    assertEquals(new Spend("openai", null, 0, 0), end.spend());
  }

  @Test
  void aCreationOfAnOlderLogReadsWithTheDefaultsItWasWrittenUnder() {
    JobCreated llm =
        (JobCreated)
            AuditEventCodec.event(
                new JsonObject()
                    .put("event", "job_created")
                    .put("job", "j")
                    .put("exec", "")
                    .put("revises", "i"));
    assertEquals("builtin", llm.agent(), "jobs recorded before agents ran the built-in one");
    assertFalse(llm.execModel());
    assertEquals(new Job.Revision("i", "proposal", 2, null, null), llm.revision());
  }
}
