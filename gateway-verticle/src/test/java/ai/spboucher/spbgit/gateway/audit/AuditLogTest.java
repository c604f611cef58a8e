package ai.spboucher.spbgit.gateway.audit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.spboucher.spbgit.proto.AuditChain;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class AuditLogTest {

  private static final Instant NOW = Instant.parse("2026-03-04T05:06:07.089Z");
  private static final Clock CLOCK = Clock.fixed(NOW, ZoneOffset.UTC);

  @TempDir Path dir;

  private Path file() {
    return dir.resolve("agent-jobs.jsonl");
  }

  @Test
  void appendAndReopenKeepTheChainAndSeq() throws Exception {
    try (AuditLog log = AuditLog.open(file(), CLOCK)) {
      JsonObject first = log.append(event("job.created", "j1"));
      assertEquals(
          List.of("seq", "ts", "prev", "type", "job"), new ArrayList<>(first.fieldNames()));
      assertEquals(1L, first.getLong("seq"));
      assertEquals(NOW.toString(), first.getString("ts"));
      assertEquals("0".repeat(64), first.getString("prev"));
      log.append(event("job.started", "j1"));
      log.append(event("job.finished", "j1"));
    }
    List<String> before = lines();
    assertTrue(
        before
            .get(0)
            .startsWith("{\"seq\":1,\"ts\":\"" + NOW + "\",\"prev\":\"" + "0".repeat(64) + "\""));

    try (AuditLog log = AuditLog.open(file(), CLOCK)) {
      assertTrue(log.checkAtOpen().ok());
      assertEquals(3, log.size());
      JsonObject fourth = log.append(event("job.created", "j2"));
      assertEquals(4L, fourth.getLong("seq"));
      assertEquals(sha256(before.get(2)), fourth.getString("prev"));
      assertEquals(4, log.entries().size());
      assertEquals(
          List.of("j1", "j1", "j1", "j2"),
          log.entries().stream().map(e -> e.getString("job")).toList());
      assertEquals(2, log.entries(e -> e.getString("type").equals("job.created")).size());
      assertTrue(log.verify().ok());
    }
    assertEquals(before, lines().subList(0, 3));
    assertTrue(AuditLog.verify(file()).ok());
  }

  @Test
  void appendingSeveralAtOnceWritesTheSameLinesAsOneByOne() throws Exception {
    Path oneByOne = dir.resolve("one-by-one.jsonl");
    try (AuditLog log = AuditLog.open(oneByOne, CLOCK)) {
      log.append(event("job.created", "j0"));
      for (int i = 1; i <= 3; i++) {
        log.append(event("job.created", "j" + i));
      }
      log.append(event("job.finished", "j0"));
    }
    try (AuditLog log = AuditLog.open(file(), CLOCK)) {
      log.append(event("job.created", "j0"));
      List<JsonObject> stored =
          log.appendAll(
              List.of(
                  event("job.created", "j1"),
                  event("job.created", "j2"),
                  event("job.created", "j3")));
      assertEquals(List.of(2L, 3L, 4L), stored.stream().map(e -> e.getLong("seq")).toList());
      assertEquals(4, log.size());
      assertEquals(5L, log.append(event("job.finished", "j0")).getLong("seq"));
      assertEquals(5, log.entries().size());
    }
    assertEquals(Files.readAllLines(oneByOne), lines());
    assertTrue(AuditLog.verify(file()).ok());
  }

  @Test
  void appendingSeveralRefusesThemAllIfOneSetsAReservedField() throws Exception {
    try (AuditLog log = AuditLog.open(file(), CLOCK)) {
      log.append(event("job.created", "j1"));
      assertThrows(
          IllegalArgumentException.class,
          () ->
              log.appendAll(
                  List.of(event("job.created", "j2"), event("job.created", "j3").put("seq", 9))));
      assertEquals(1, log.size());
      assertEquals(2L, log.append(event("job.created", "j2")).getLong("seq"));
    }
    assertEquals(2, lines().size());
    assertTrue(AuditLog.verify(file()).ok());
  }

  @Test
  void verifyAcceptsAGoodLogAndAnEmptyOne() throws Exception {
    try (AuditLog log = AuditLog.open(file(), CLOCK)) {
      assertEquals("0 entries, chain intact", AuditLog.verify(file()).message());
      appendEvents(log, 5);
    }
    AuditChain.Result result = AuditLog.verify(file());
    assertTrue(result.ok(), result.message());
    assertEquals(5, result.lines());
  }

  @Test
  void verifyNamesTheLineAfterAnEditedMiddleLine() throws Exception {
    writeLog(5);
    List<String> lines = lines();
    lines.set(2, lines.get(2).replace("\"job-3\"", "\"job-X\""));
    rewrite(lines);
    assertBroken(4, "line 4: prev does not match the hash of line 3");
  }

  @Test
  void verifyNamesADeletedMiddleLine() throws Exception {
    writeLog(5);
    List<String> lines = lines();
    lines.remove(2);
    rewrite(lines);
    assertBroken(3, "line 3: seq is 4, expected 3");
  }

  @Test
  void verifyNamesSwappedLines() throws Exception {
    writeLog(5);
    List<String> lines = lines();
    String second = lines.get(1);
    lines.set(1, lines.get(2));
    lines.set(2, second);
    rewrite(lines);
    assertBroken(2, "line 2: seq is 3, expected 2");
  }

  @Test
  void verifyNamesAForgedLineWithAWrongPrevAndAppendsKeepReportingIt() throws Exception {
    writeLog(5);
    JsonObject forged =
        new JsonObject()
            .put("seq", 6)
            .put("ts", NOW.toString())
            .put("prev", "a".repeat(64))
            .put("type", "job.finished")
            .put("job", "job-1");
    Files.writeString(file(), forged.encode() + "\n", StandardOpenOption.APPEND);
    assertBroken(6, "line 6: prev does not match the hash of line 5");

    try (AuditLog log = AuditLog.open(file(), CLOCK)) {
      assertEquals(6, log.checkAtOpen().badLine());
      assertEquals(7L, log.append(event("job.created", "job-7")).getLong("seq"));
    }
    assertBroken(6, "line 6: prev does not match the hash of line 5");
  }

  @Test
  void garbageInTheMiddleIsReportedNotRepairedAndAppendsContinue() throws Exception {
    writeLog(3);
    List<String> lines = lines();
    lines.set(1, "{not json");
    rewrite(lines);
    try (AuditLog log = AuditLog.open(file(), CLOCK)) {
      assertEquals(2, log.checkAtOpen().badLine());
      assertEquals(2, log.entries().size());
      JsonObject fourth = log.append(event("job.created", "job-4"));
      assertEquals(4L, fourth.getLong("seq"));
      assertEquals(sha256(lines.get(2)), fourth.getString("prev"));
    }
    assertEquals(lines, lines().subList(0, 3));
    assertBroken(2, "line 2: not a valid UTF-8 JSON object");
  }

  @Test
  void aTornLastLineIsSetAsideAndTheChainContinuesFromTheLastGoodLine() throws Exception {
    writeLog(3);
    byte[] good = Files.readAllBytes(file());
    byte[] half =
        "{\"seq\":4,\"ts\":\"2026-03-04T05:06:07.089Z\",\"pr".getBytes(StandardCharsets.UTF_8);
    Files.write(file(), half, StandardOpenOption.APPEND);
    assertBroken(4, "line 4: torn: " + half.length + " bytes without a trailing newline");

    try (AuditLog log = AuditLog.open(file(), CLOCK)) {
      Path side = dir.resolve("agent-jobs.jsonl.torn-" + NOW.toEpochMilli());
      assertArrayEquals(half, Files.readAllBytes(side));
      assertArrayEquals(good, Arrays.copyOf(Files.readAllBytes(file()), good.length));
      assertTrue(log.checkAtOpen().ok());
      JsonObject note = new JsonObject(lines().get(3));
      assertEquals(AuditLog.TORN_LINE_SET_ASIDE, note.getString("event"));
      assertEquals(sha256(lines().get(2)), note.getString("prev"));
      JsonObject fifth = log.append(event("job.created", "job-4"));
      assertEquals(5L, fifth.getLong("seq"));
      assertEquals(sha256(lines().get(3)), fifth.getString("prev"));
    }
    assertTrue(AuditLog.verify(file()).ok(), AuditLog.verify(file()).message());
  }

  @Test
  void aLastLineThatIsNotJsonIsSetAsideEvenWithItsNewline() throws Exception {
    writeLog(2);
    byte[] good = Files.readAllBytes(file());
    byte[] bad = "{\"seq\":3,\"ts\":\0\0\0\n".getBytes(StandardCharsets.UTF_8);
    Files.write(file(), bad, StandardOpenOption.APPEND);
    assertBroken(3, "line 3: not a valid UTF-8 JSON object");

    try (AuditLog log = AuditLog.open(file(), CLOCK)) {
      assertArrayEquals(
          bad, Files.readAllBytes(dir.resolve("agent-jobs.jsonl.torn-" + NOW.toEpochMilli())));
      assertArrayEquals(good, Arrays.copyOf(Files.readAllBytes(file()), good.length));
      assertEquals(AuditLog.TORN_LINE_SET_ASIDE, new JsonObject(lines().get(2)).getString("event"));
      log.append(event("job.created", "job-3"));
    }
    assertTrue(AuditLog.verify(file()).ok());
  }

  @Test
  void aSecondTornLineAtTheSameMillisecondGetsItsOwnSideFile() throws Exception {
    writeLog(1);
    Files.writeString(file(), "{\"a\"", StandardOpenOption.APPEND);
    AuditLog.open(file(), CLOCK).close();
    Files.writeString(file(), "{\"b\"", StandardOpenOption.APPEND);
    AuditLog.open(file(), CLOCK).close();
    String base = "agent-jobs.jsonl.torn-" + NOW.toEpochMilli();
    assertEquals("{\"a\"", Files.readString(dir.resolve(base)));
    assertEquals("{\"b\"", Files.readString(dir.resolve(base + "-2")));
    assertTrue(AuditLog.verify(file()).ok());
  }

  @Test
  void awkwardStringsRoundTripAsOneLine() throws Exception {
    String awkward =
        "line one\nline two\r\n\u2028\u2029 \"quoted\" \\ \t \u0000 \u00e9\u4e2d\ud83d\ude00";
    String big = "x".repeat(100 * 1024);
    JsonObject event =
        new JsonObject()
            .put("type", "job.output")
            .put("text", awkward)
            .put("big", big)
            .put("nested", new JsonObject().put("list", new JsonArray().add(awkward)));
    try (AuditLog log = AuditLog.open(file(), CLOCK)) {
      JsonObject stored = log.append(event);
      assertEquals(awkward, stored.getString("text"));
      assertEquals(big, stored.getString("big"));
    }
    byte[] content = Files.readAllBytes(file());
    assertEquals(1, countNewlines(content));
    assertEquals('\n', content[content.length - 1]);
    try (AuditLog log = AuditLog.open(file(), CLOCK)) {
      JsonObject reread = log.entries().get(0);
      assertEquals(awkward, reread.getString("text"));
      assertEquals(big, reread.getString("big"));
      assertEquals(awkward, reread.getJsonObject("nested").getJsonArray("list").getString(0));
    }
    assertTrue(AuditLog.verify(file()).ok());
  }

  @Test
  void refusesEventsThatSetChainFields() throws Exception {
    try (AuditLog log = AuditLog.open(file(), CLOCK)) {
      for (String field : List.of("prev", "seq", "ts")) {
        JsonObject event = event("job.created", "j1").put(field, "forged");
        IllegalArgumentException e =
            assertThrows(IllegalArgumentException.class, () -> log.append(event));
        assertTrue(e.getMessage().contains(field), e.getMessage());
      }
      assertEquals(0, log.size());
    }
    assertEquals(0, Files.size(file()));
  }

  @Test
  void refusesASecondOpenOfTheSameFile() throws Exception {
    try (AuditLog log = AuditLog.open(file(), CLOCK)) {
      assertThrows(IOException.class, () -> AuditLog.open(file(), CLOCK));
      log.append(event("job.created", "j1"));
    }
    assertTrue(AuditLog.verify(file()).ok());
  }

  @Test
  void concurrentAppendsFormOneValidChain() throws Exception {
    int threads = 8;
    int perThread = 100;
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try (AuditLog log = AuditLog.open(file(), Clock.systemUTC())) {
      CountDownLatch start = new CountDownLatch(1);
      List<Future<?>> done = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        String writer = "writer-" + t;
        done.add(
            pool.submit(
                () -> {
                  start.await();
                  for (int i = 0; i < perThread; i++) {
                    log.append(new JsonObject().put("writer", writer).put("n", i));
                  }
                  return null;
                }));
      }
      start.countDown();
      for (Future<?> f : done) {
        f.get(60, TimeUnit.SECONDS);
      }
      assertEquals(threads * perThread, log.size());
      for (int t = 0; t < threads; t++) {
        String writer = "writer-" + t;
        List<Integer> order =
            log.entries(e -> writer.equals(e.getString("writer"))).stream()
                .map(e -> e.getInteger("n"))
                .toList();
        assertEquals(java.util.stream.IntStream.range(0, perThread).boxed().toList(), order);
      }
    } finally {
      pool.shutdownNow();
    }
    assertEquals(threads * perThread, lines().size());
    AuditChain.Result result = AuditLog.verify(file());
    assertTrue(result.ok(), result.message());
    assertEquals(threads * perThread, result.lines());
  }

  private void writeLog(int entries) throws IOException {
    try (AuditLog log = AuditLog.open(file(), CLOCK)) {
      appendEvents(log, entries);
    }
    assertTrue(AuditLog.verify(file()).ok());
  }

  private static void appendEvents(AuditLog log, int entries) throws IOException {
    for (int i = 1; i <= entries; i++) {
      log.append(event("job.created", "job-" + i));
    }
  }

  private static JsonObject event(String type, String job) {
    return new JsonObject().put("type", type).put("job", job);
  }

  private void assertBroken(long badLine, String message) throws IOException {
    AuditChain.Result result = AuditLog.verify(file());
    assertFalse(result.ok());
    assertEquals(badLine, result.badLine());
    assertEquals(message, result.message());
  }

  /** The file's lines, split on '\n' only (no other character ends a line in this format). */
  private List<String> lines() throws IOException {
    String content = Files.readString(file(), StandardCharsets.UTF_8);
    assertTrue(content.endsWith("\n"));
    return new ArrayList<>(
        Arrays.asList(content.substring(0, content.length() - 1).split("\n", -1)));
  }

  private void rewrite(List<String> lines) throws IOException {
    Files.writeString(file(), String.join("\n", lines) + "\n", StandardCharsets.UTF_8);
  }

  private static int countNewlines(byte[] content) {
    int count = 0;
    for (byte b : content) {
      if (b == '\n') {
        count++;
      }
    }
    return count;
  }

  private static String sha256(String line) throws Exception {
    return HexFormat.of()
        .formatHex(
            MessageDigest.getInstance("SHA-256").digest(line.getBytes(StandardCharsets.UTF_8)));
  }
}
