package ai.spboucher.spbgit.common;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class RevocationListTest {

  private static final Instant NOW = Instant.parse("2030-01-01T12:00:00Z");
  private static final Clock CLOCK = Clock.fixed(NOW, ZoneOffset.UTC);

  @TempDir Path dir;

  @Test
  void missingFileIsAnEmptyListAndIsNotCreatedByLoading() throws IOException {
    Path file = dir.resolve("revoked-job-tokens.json");

    RevocationList list = RevocationList.load(file, CLOCK);

    assertFalse(list.isRevoked("anything"));
    assertFalse(Files.exists(file));
  }

  @Test
  void revokePersistsTheTokenIdAndItsExpiry() throws IOException {
    Path file = dir.resolve("data/revoked-job-tokens.json");
    RevocationList list = RevocationList.load(file, CLOCK);

    list.revoke("jti-1", NOW.plus(Duration.ofHours(1)));

    assertTrue(list.isRevoked("jti-1"));
    assertFalse(list.isRevoked("jti-2"));
    JsonNode entries = new ObjectMapper().readTree(file.toFile()).get("revoked");
    assertEquals(1, entries.size());
    assertEquals("jti-1", entries.get(0).get("jti").textValue());
    assertEquals(
        NOW.plus(Duration.ofHours(1)).getEpochSecond(), entries.get(0).get("exp").longValue());
    assertEquals(List.of("revoked-job-tokens.json"), listDir(file.getParent()));
  }

  @Test
  void reloadSeesEarlierRevocations() throws IOException {
    Path file = dir.resolve("revoked-job-tokens.json");
    RevocationList first = RevocationList.load(file, CLOCK);
    first.revoke("jti-1", NOW.plus(Duration.ofHours(1)));
    first.revoke("jti-2", NOW.plus(Duration.ofHours(2)));

    RevocationList reloaded = RevocationList.load(file, CLOCK);

    assertTrue(reloaded.isRevoked("jti-1"));
    assertTrue(reloaded.isRevoked("jti-2"));
    assertFalse(reloaded.isRevoked("jti-3"));
  }

  @Test
  void expiredEntriesArePrunedOnTheNextRevoke() throws IOException {
    Path file = dir.resolve("revoked-job-tokens.json");
    RevocationList.load(file, CLOCK).revoke("old", NOW.plus(Duration.ofMinutes(30)));
    RevocationList.load(file, CLOCK).revoke("young", NOW.plus(Duration.ofHours(2)));

    RevocationList later = RevocationList.load(file, Clock.offset(CLOCK, Duration.ofHours(1)));
    assertTrue(later.isRevoked("old"), "entries stay until the next revoke");
    later.revoke("new", NOW.plus(Duration.ofHours(3)));

    assertFalse(later.isRevoked("old"));
    RevocationList reloaded = RevocationList.load(file, CLOCK);
    assertFalse(reloaded.isRevoked("old"));
    assertTrue(reloaded.isRevoked("young"));
    assertTrue(reloaded.isRevoked("new"));
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "",
        "{not json",
        "[]",
        "null",
        "{}",
        "{\"revoked\": 5}",
        "{\"revoked\": {}}",
        "{\"revoked\": [1]}",
        "{\"revoked\": [{\"exp\": 1}]}",
        "{\"revoked\": [{\"jti\": \"a\"}]}",
        "{\"revoked\": [{\"jti\": \"a\", \"exp\": \"soon\"}]}",
        "{\"revoked\": [{\"jti\": 7, \"exp\": 1}]}"
      })
  void corruptFileFailsToLoad(String content) throws IOException {
    Path file = dir.resolve("revoked-job-tokens.json");
    Files.writeString(file, content, StandardCharsets.UTF_8);

    assertThrows(IOException.class, () -> RevocationList.load(file, CLOCK));
  }

  private static List<String> listDir(Path dir) throws IOException {
    try (var files = Files.list(dir)) {
      return files.map(p -> p.getFileName().toString()).sorted().toList();
    }
  }
}
