package ai.spboucher.spbgit.gateway.jobs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.vertx.core.json.JsonObject;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The ledger the verbs share: {@link JobLedger}. */
class JobLedgerTest extends JobLifecycleFixture {

  @Test
  void aJobRecordedBeforeAgentsRanTheBuiltInOne() {
    JobBook book =
        JobBook.replay(
            List.of(
                new JsonObject()
                    .put("event", JobBook.CREATED)
                    .put("job", "j-llm")
                    .put("exec", "")
                    .put("model", "model-a"),
                new JsonObject()
                    .put("event", JobBook.CREATED)
                    .put("job", "j-exec")
                    .put("exec", "true")));
    assertEquals("builtin", book.get("j-llm").orElseThrow().agent());
    assertEquals("llm", book.get("j-llm").orElseThrow().toJson(WorkShas.NONE).getString("mode"));
    assertNull(book.get("j-exec").orElseThrow().agent());
    assertFalse(book.get("j-exec").orElseThrow().execModel());
  }

  @Test
  void readsTheAuditOfARepositoryIncludingItsJobsEntriesWithoutARepository() throws Exception {
    Job created = on(() -> jobs.creation().create(REPO, EXEC_JOB, OWNER));
    List<JsonObject> entries = on(() -> jobs.ledger().auditEntries(REPO.value(), null));
    assertEquals(
        List.of(JobBook.CREATED, JobBook.DISPATCHED),
        entries.stream().map(e -> e.getString("event")).toList());
    assertNull(entries.get(1).getString("repo"));
    List<String> lines = on(() -> jobs.ledger().auditLines(null, created.id()));
    assertEquals(
        Files.readString(audit.file(), StandardCharsets.UTF_8), String.join("\n", lines) + "\n");
    assertEquals(List.of(), on(() -> jobs.ledger().auditEntries("other", null)));
  }
}
