package ai.spboucher.spbgit.gateway.jobs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.List;
import java.util.Map;
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

  @Test
  void appliesAnEntryThatIsLoggedEvenWhenTheStepBeforeApplyingFails() throws Exception {
    Job created = on(() -> jobs.creation().create(REPO, EXEC_JOB, OWNER));
    Throwable failed =
        failure(
            () ->
                jobs.ledger()
                    .record(
                        new JobRejected(created.id(), REPO.value(), OWNER.tokenId()),
                        () -> Future.failedFuture(new IllegalStateException("disk full"))));
    assertEquals("disk full", failed.getMessage(), "the caller learns the step failed");
    assertEquals(
        "rejected",
        job(created.id()).decision().getString("decision"),
        "what the log holds, the book shows");
    assertEquals(
        List.of(JobBook.CREATED, JobBook.DISPATCHED, JobBook.REJECTED), events(created.id()));
  }

  @Test
  void listsJobsByRepositoryAndGroup() throws Exception {
    Job lone = on(() -> jobs.creation().create(REPO, EXEC_JOB, OWNER));
    Map.Entry<String, List<Job>> group =
        on(() -> jobs.creation().createGroup(REPO, EXEC_JOB, OWNER, 2));
    assertEquals(3, on(() -> Future.succeededFuture(jobs.ledger().list(REPO.value()))).size());
    assertEquals(List.of(), on(() -> Future.succeededFuture(jobs.ledger().list("other"))));
    assertEquals(
        group.getValue().stream().map(Job::id).toList(),
        on(() -> Future.succeededFuture(jobs.ledger().group(group.getKey()))).stream()
            .map(Job::id)
            .toList());
    assertTrue(group.getValue().stream().allMatch(j -> group.getKey().equals(j.group())));
    assertNull(lone.group());
    assertEquals(
        List.of(lone.id()),
        on(() -> Future.succeededFuture(jobs.ledger().revisions(lone))).stream()
            .map(Job::id)
            .toList());
  }
}
