package ai.spboucher.spbgit.gateway.audit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.spboucher.spbgit.gateway.jobs.Job;
import ai.spboucher.spbgit.gateway.jobs.JobBook;
import ai.spboucher.spbgit.proto.AuditChain;
import io.vertx.core.json.JsonObject;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A crash mid-append, written by hand: the log cut through its last line, at many points and at
 * every byte of its multi-byte characters. Opening it must always end the same way: the partial
 * line moved to a side file, the log truncated to its last complete line, the repair recorded as
 * the next entry of the chain, and the chain intact.
 */
class AuditLogTornTailTest {

  private static final Instant NOW = Instant.parse("2026-05-06T07:08:09.010Z");
  private static final Clock CLOCK = Clock.fixed(NOW, ZoneOffset.UTC);

  @TempDir Path dir;

  @Test
  void aCutAnywhereInTheLastLineIsSetAsideAndRecordedInTheChain() throws Exception {
    Path file = dir.resolve("agent-jobs.jsonl");
    try (AuditLog log = AuditLog.open(file, CLOCK)) {
      for (int i = 1; i <= 4; i++) {
        log.append(
            new JsonObject()
                .put("event", "job_created")
                .put("job", "job-" + i)
                .put("task", "t\u00e9\u4e2d"));
      }
    }
    byte[] whole = Files.readAllBytes(file);
    assertTrue(
        new String(whole, StandardCharsets.UTF_8).contains("\u4e2d"),
        "the lines hold multi-byte characters");
    int lastLineStart = lastIndexOf(whole, (byte) '\n', whole.length - 2) + 1;
    byte[] good = Arrays.copyOf(whole, lastLineStart);

    // Lengths from one byte to the whole line without its newline, every byte of the multi-byte
    // characters among
    // them (each open fsyncs a few times, so not every length of the ASCII rest).
    int length = whole.length - lastLineStart - 1;
    for (int cut = 1; cut <= length; cut++) {
      if (cut % 7 != 0
          && cut > 2
          && cut < length - 2
          && (whole[lastLineStart + cut] & 0x80) == 0
          && (whole[lastLineStart + cut - 1] & 0x80) == 0) {
        continue;
      }
      byte[] torn = Arrays.copyOfRange(whole, lastLineStart, lastLineStart + cut);
      Path sub = Files.createDirectories(dir.resolve("cut-" + cut));
      Path copy = sub.resolve("agent-jobs.jsonl");
      Files.write(copy, concat(good, torn));
      assertFalse(AuditLog.verify(copy).ok(), "a torn tail fails verification before the repair");

      try (AuditLog log = AuditLog.open(copy, CLOCK)) {
        assertTrue(log.checkAtOpen().ok(), log.checkAtOpen().message());
        assertEquals(4, log.size(), "three kept lines and the note, cut at " + cut);
        JsonObject note = log.entries().get(3);
        assertEquals(AuditLog.TORN_LINE_SET_ASIDE, note.getString("event"));
        assertEquals("agent-jobs.jsonl.torn-" + NOW.toEpochMilli(), note.getString("file"));
        assertEquals(cut, note.getInteger("bytes"));
        assertEquals(sha256(torn), note.getString("sha256"));
        assertEquals("the last line has no trailing newline", note.getString("why"));
        assertEquals(
            sha256(
                Arrays.copyOfRange(
                    good, lastIndexOf(good, (byte) '\n', good.length - 2) + 1, good.length - 1)),
            note.getString("prev"),
            "the note follows the last complete line");
      }
      assertArrayEquals(
          torn,
          Files.readAllBytes(sub.resolve(note(copy).getString("file"))),
          "the side file holds exactly the torn bytes");
      byte[] repaired = Files.readAllBytes(copy);
      assertArrayEquals(
          good, Arrays.copyOf(repaired, good.length), "the complete lines are untouched");
      AuditChain.Result check = AuditLog.verify(copy);
      assertTrue(check.ok(), "cut at " + cut + ": " + check.message());
      assertEquals(4, check.lines());
    }
  }

  @Test
  void aRepairedLogReopensAsItIsAndKeepsAppending() throws Exception {
    Path file = dir.resolve("agent-jobs.jsonl");
    try (AuditLog log = AuditLog.open(file, CLOCK)) {
      log.append(new JsonObject().put("event", "job_created").put("job", "a"));
    }
    Files.writeString(
        file,
        "{\"seq\":2,\"ts\":\"2026-05-06T07:08",
        StandardCharsets.UTF_8,
        java.nio.file.StandardOpenOption.APPEND);
    try (AuditLog log = AuditLog.open(file, CLOCK)) {
      assertEquals(2, log.size());
    }
    byte[] afterRepair = Files.readAllBytes(file);
    try (AuditLog log = AuditLog.open(file, CLOCK)) {
      assertEquals(2, log.size(), "a sound log gets no second note");
      assertArrayEquals(afterRepair, Files.readAllBytes(file));
      JsonObject next = log.append(new JsonObject().put("event", "job_dispatched").put("job", "a"));
      assertEquals(3L, next.getLong("seq"));
    }
    assertTrue(AuditLog.verify(file).ok());
    try (AuditLog log = AuditLog.open(file, CLOCK)) {
      JobBook book = JobBook.replay(log.entries());
      assertEquals(
          List.of("a"), book.list(null).stream().map(Job::id).toList(), "the note is no job");
      assertEquals(Job.DISPATCHED, book.get("a").orElseThrow().status());
    }
  }

  @Test
  void repeatedCrashesLeaveOneNoteAndOneSideFileEach() throws Exception {
    Path file = dir.resolve("agent-jobs.jsonl");
    AuditLog.open(file, CLOCK).close();
    for (String torn : List.of("{\"seq\":1,", "{\"seq\":2,\"ts\"", "not json at all\n")) {
      Files.writeString(
          file, torn, StandardCharsets.UTF_8, java.nio.file.StandardOpenOption.APPEND);
      AuditLog.open(file, CLOCK).close();
    }
    AuditChain.Result check = AuditLog.verify(file);
    assertTrue(check.ok(), check.message());
    assertEquals(3, check.lines());
    try (Stream<Path> files = Files.list(dir)) {
      assertEquals(
          3,
          files
              .filter(p -> p.getFileName().toString().startsWith("agent-jobs.jsonl.torn-"))
              .count());
    }
    assertEquals("the last line is not a JSON object", note(file).getString("why"));
  }

  /** The last entry of the log, which the tests expect to be the repair note. */
  private static JsonObject note(Path file) throws Exception {
    List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8);
    return new JsonObject(lines.get(lines.size() - 1));
  }

  private static int lastIndexOf(byte[] bytes, byte b, int from) {
    for (int i = from; i >= 0; i--) {
      if (bytes[i] == b) {
        return i;
      }
    }
    return -1;
  }

  private static byte[] concat(byte[] a, byte[] b) {
    byte[] out = Arrays.copyOf(a, a.length + b.length);
    System.arraycopy(b, 0, out, a.length, b.length);
    return out;
  }

  private static String sha256(byte[] bytes) throws Exception {
    return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
  }
}
