package ai.spboucher.spbgit.gateway.auth;

import static org.junit.jupiter.api.Assertions.assertEquals;

import ai.spboucher.spbgit.common.EcKeys;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class RunnerKeysTest {

  @TempDir Path tmp;

  private static String pem(KeyPair pair) {
    return EcKeys.publicPem(pair.getPublic());
  }

  private static String kid(KeyPair pair) {
    return EcKeys.keyId(pair.getPublic());
  }

  @Test
  void everyPublicKeyFileIsARunnerAndChangesAreSeenWithoutARestart() throws Exception {
    Path dir = tmp.resolve("runners");
    RunnerKeys keys = new RunnerKeys(dir);
    assertEquals(Map.of(), keys.current(), "a missing directory has no keys");

    Files.createDirectories(dir);
    KeyPair left = EcKeys.generate();
    KeyPair right = EcKeys.generate();
    Files.writeString(dir.resolve("left.pub.pem"), pem(left));
    assertEquals(Set.of(kid(left)), keys.current().keySet());

    Files.writeString(dir.resolve("right.pub.pem"), pem(right));
    Files.writeString(dir.resolve("notes.txt"), "not a key file name");
    Files.writeString(dir.resolve("junk.pub.pem"), "not a key");
    assertEquals(Set.of(kid(left), kid(right)), keys.current().keySet());

    Files.delete(dir.resolve("left.pub.pem"));
    assertEquals(Set.of(kid(right)), keys.current().keySet(), "a removed runner is dropped");

    KeyPair replaced = EcKeys.generate();
    Files.writeString(dir.resolve("right.pub.pem"), pem(replaced) + "\n\n");
    assertEquals(Set.of(kid(replaced)), keys.current().keySet(), "a replaced file is read again");
  }
}
