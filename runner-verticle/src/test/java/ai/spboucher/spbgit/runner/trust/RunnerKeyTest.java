package ai.spboucher.spbgit.runner.trust;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.spboucher.spbgit.common.EcKeys;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class RunnerKeyTest {

  @TempDir Path tmp;

  @Test
  void isCreatedOnFirstStartWithItsPublicHalfBesideAndKeptAfterwards() throws Exception {
    Path file = tmp.resolve("work/runner-key.pem");
    RunnerKey created = RunnerKey.loadOrCreate(file);
    assertEquals(tmp.resolve("work/runner-key.pub.pem"), created.publicFile());
    assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(file)));
    assertEquals(created.keyId(), EcKeys.keyId(EcKeys.readPublic(created.publicFile())));
    assertEquals(created.keyId(), RunnerKey.loadOrCreate(file).keyId(), "the same key next time");
    assertTrue(!created.toString().contains("PRIVATE"), "no key material in logs");
  }

  @Test
  void refusesAKeyOthersCanRead() throws Exception {
    Path file = tmp.resolve("runner-key.pem");
    RunnerKey.loadOrCreate(file);
    Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-r--r--"));
    IllegalStateException e =
        assertThrows(IllegalStateException.class, () -> RunnerKey.loadOrCreate(file));
    assertTrue(e.getMessage().contains("is accessible to others: chmod 600"), e.getMessage());
  }

  @Test
  void refusesAPublicHalfThatIsNotTheKeys() throws Exception {
    Path file = tmp.resolve("runner-key.pem");
    RunnerKey key = RunnerKey.loadOrCreate(file);
    Files.writeString(key.publicFile(), EcKeys.publicPem(EcKeys.generate().getPublic()));
    IllegalStateException wrong =
        assertThrows(IllegalStateException.class, () -> RunnerKey.loadOrCreate(file));
    assertTrue(wrong.getMessage().contains("is not the public half"), wrong.getMessage());
    Files.delete(key.publicFile());
    IllegalStateException missing =
        assertThrows(IllegalStateException.class, () -> RunnerKey.loadOrCreate(file));
    assertTrue(missing.getMessage().contains("has no public half"), missing.getMessage());
  }
}
