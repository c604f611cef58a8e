package ai.spboucher.spbgit.common;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.spec.ECGenParameterSpec;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class EcKeysTest {

  @TempDir Path tmp;

  @Test
  void aCreatedPairReadsBackWithAPrivateHalfOnlyItsOwnerReads() throws Exception {
    Path privateFile = tmp.resolve("keys/runner-key.pem");
    Path publicFile = EcKeys.publicFileBeside(privateFile);
    assertEquals(tmp.resolve("keys/runner-key.pub.pem"), publicFile);
    KeyPair pair = EcKeys.create(privateFile, publicFile);
    assertEquals(
        "rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(privateFile)));
    assertEquals(pair.getPublic(), EcKeys.readPublic(publicFile));
    assertEquals(pair.getPrivate(), EcKeys.readPrivate(privateFile));
    assertTrue(Files.readString(publicFile).startsWith("-----BEGIN PUBLIC KEY-----\n"));
  }

  @Test
  void theKeyIdIsSixteenCharactersOfTheKeysDigestAndStable() throws Exception {
    KeyPair pair = EcKeys.generate();
    String kid = EcKeys.keyId(pair.getPublic());
    assertEquals(16, kid.length());
    assertTrue(kid.matches("[A-Za-z0-9_-]{16}"), kid);
    assertEquals(kid, EcKeys.keyId(EcKeys.publicFromPem(EcKeys.publicPem(pair.getPublic()))));
  }

  @Test
  void refusesKeysOfOtherCurvesAndWhatIsNoKey() throws Exception {
    KeyPairGenerator generator = KeyPairGenerator.getInstance("EC");
    generator.initialize(new ECGenParameterSpec("secp384r1"));
    KeyPair p384 = generator.generateKeyPair();
    assertThrows(
        GeneralSecurityException.class,
        () -> EcKeys.publicFromPem(EcKeys.publicPem(p384.getPublic())));
    assertThrows(
        GeneralSecurityException.class,
        () -> EcKeys.privateFromPem(EcKeys.privatePem(p384.getPrivate())));
    assertThrows(GeneralSecurityException.class, () -> EcKeys.publicFromPem("hello"));
    assertThrows(
        GeneralSecurityException.class,
        () -> EcKeys.publicFromPem("-----BEGIN PUBLIC KEY-----\n!!\n-----END PUBLIC KEY-----"));
    assertThrows(
        GeneralSecurityException.class,
        () -> EcKeys.privateFromPem(EcKeys.publicPem(EcKeys.generate().getPublic())));
  }
}
