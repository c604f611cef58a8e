package ai.spboucher.spbgit.gateway.auth;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import ai.spboucher.spbgit.common.EcKeys;
import ai.spboucher.spbgit.common.RevocationList;
import ai.spboucher.spbgit.hooks.InvalidJobTokenException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SigningKeyTest {

  @TempDir Path keys;

  private JobTokens tokens(Path dir) throws Exception {
    return new JobTokens(
        SigningKey.loadOrCreate(dir),
        SigningKey.verificationKeys(dir),
        RevocationList.load(dir.resolve("revoked.json"), Clock.systemUTC()),
        Clock.systemUTC());
  }

  @Test
  void tokensSignedWithARetiredKeyVerifyAfterRotation() throws Exception {
    String before = tokens(keys).issue("job1", "demo", Duration.ofMinutes(5));
    String oldKid = SigningKey.loadOrCreate(keys).keyId();
    SigningKey rotated = SigningKey.rotate(keys);
    assertNotEquals(oldKid, rotated.keyId());

    JobTokens afterRotation = tokens(keys);
    assertEquals("job1", afterRotation.verify(before).jobId(), "old kid still verifies");
    String after = afterRotation.issue("job2", "demo", Duration.ofMinutes(5));
    assertEquals("job2", afterRotation.verify(after).jobId());
  }

  @Test
  void retiredKeysAreDroppedOnceTheirTokensMustHaveExpired() throws Exception {
    String before = tokens(keys).issue("job1", "demo", Duration.ofMinutes(5));
    SigningKey.rotate(keys);
    try (var retired = Files.list(keys.resolve("retired"))) {
      for (Path p : retired.toList()) {
        Files.setLastModifiedTime(p, FileTime.from(Instant.now().minus(Duration.ofHours(3))));
      }
    }
    SigningKey.rotate(keys);
    assertEquals(
        1, Files.list(keys.resolve("retired")).count(), "only the key retired just now remains");
    assertThrows(InvalidJobTokenException.class, () -> tokens(keys).verify(before));
  }

  @Test
  void theJobBusKeysPublicHalvesCurrentAndRetiredShareADirectoryWithoutThePrivateKey()
      throws Exception {
    SigningKey.KeyFiles files = SigningKey.KeyFiles.jobBus(keys);
    SigningKey first = SigningKey.loadOrCreate(files);
    assertEquals(keys.resolve("job-bus-signing.pem"), files.privateFile());
    Path dir = keys.resolve("job-bus");
    assertEquals(Set.of("job-bus-signing.pub.pem"), names(dir));
    assertNotEquals(SigningKey.loadOrCreate(keys).keyId(), first.keyId(), "not the job-token key");

    SigningKey second = SigningKey.rotate(files);
    assertNotEquals(first.keyId(), second.keyId());
    assertEquals(Set.of(first.keyId() + ".pub.pem", "job-bus-signing.pub.pem"), names(dir));
    assertEquals(second.publicKey(), EcKeys.readPublic(dir.resolve("job-bus-signing.pub.pem")));
    assertEquals(first.publicKey(), EcKeys.readPublic(dir.resolve(first.keyId() + ".pub.pem")));
    assertEquals(second.keyId(), SigningKey.loadOrCreate(files).keyId(), "the new key stays");

    // Hours later, a rotation drops the retired key whose requests must have expired.
    Files.setLastModifiedTime(
        dir.resolve(first.keyId() + ".pub.pem"),
        FileTime.from(Instant.now().minus(Duration.ofHours(3))));
    SigningKey third = SigningKey.rotate(files);
    assertEquals(Set.of(second.keyId() + ".pub.pem", "job-bus-signing.pub.pem"), names(dir));
    assertEquals(third.publicKey(), EcKeys.readPublic(files.publicFile()));
  }

  private static Set<String> names(Path dir) throws Exception {
    try (var files = Files.list(dir)) {
      return files.map(p -> p.getFileName().toString()).collect(Collectors.toSet());
    }
  }
}
