package ai.spboucher.spbgit.gateway.jobs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.spboucher.spbgit.gateway.audit.AuditLog;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Audit logs written by earlier releases replay to the same jobs: a log {@link AuditFixtureWriter}
 * wrote with every event there is, checked in with each job's API form as that release showed it.
 */
class AuditLogReplayTest {

  private static final Path LOG = AuditFixtureWriter.FIXTURES.resolve(AuditFixtureWriter.LOG);
  private static final Path JOBS = AuditFixtureWriter.FIXTURES.resolve(AuditFixtureWriter.JOBS);

  @TempDir Path tmp;

  @Test
  void theCheckedInLogIsSoundAndHasEveryEvent() throws Exception {
    assertTrue(AuditLog.verify(LOG).ok());
    Set<String> events =
        lines().stream()
            .map(line -> new JsonObject(line).getString("event"))
            .collect(Collectors.toSet());
    assertEquals(
        Set.of(
            JobBook.CREATED,
            JobBook.DISPATCHED,
            JobBook.STARTED,
            JobBook.REFS_WRITTEN,
            JobBook.FINISHED,
            JobBook.APPROVED,
            JobBook.REJECTED,
            JobBook.SUPERSEDED,
            JobBook.REFS_DELETED,
            JobBook.REVIEW_COMMENT,
            JobBook.REVISED,
            JobBook.REFUSED),
        events);
  }

  @Test
  void replaysToTheJobsTheLogWasWrittenWith() throws Exception {
    Path copy = tmp.resolve(AuditFixtureWriter.LOG);
    Files.copy(LOG, copy);
    JobBook book;
    try (AuditLog audit = AuditLog.open(copy, Clock.systemUTC())) {
      book = JobBook.replay(audit.entries());
      assertEquals(lines().size(), audit.size(), "nothing was repaired or added");
    }
    JsonArray expected = new JsonArray(Files.readString(JOBS, StandardCharsets.UTF_8));
    List<Job> jobs = book.list(null);
    assertEquals(expected.size(), jobs.size());
    for (int i = 0; i < jobs.size(); i++) {
      Job job = jobs.get(i);
      JsonObject view = expected.getJsonObject(i);
      assertEquals(
          view.getJsonObject("job").encodePrettily(),
          job.toJson(WorkShas.NONE).encodePrettily(),
          job.id());
      assertEquals(
          view.getJsonArray("comments").encodePrettily(),
          new JsonArray(book.comments(job.id())).encodePrettily(),
          job.id());
    }
  }

  @Test
  void everyLineReadsAndWritesBackByteForByte() throws Exception {
    for (String line : lines()) {
      AuditEventCodec.Entry entry = AuditEventCodec.decode(line);
      assertFalse(entry.event() instanceof OtherEvent, line);
      assertEquals(line, AuditEventCodec.encodeLine(entry));
    }
  }

  private static List<String> lines() throws Exception {
    return Files.readAllLines(LOG, StandardCharsets.UTF_8);
  }
}
