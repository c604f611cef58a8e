package ai.spboucher.spbgit.common;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import ai.spboucher.spbgit.common.TokenSeal.Sealed;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.KeyPair;
import java.security.interfaces.ECPublicKey;
import java.security.spec.ECPoint;
import java.security.spec.ECPublicKeySpec;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class TokenSealTest {

  private static final String TOKEN = "eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJqb2IifQ.c2lnbmF0dXJl";

  private final KeyPair left = EcKeys.generate();
  private final KeyPair right = EcKeys.generate();
  private final String leftKid = EcKeys.keyId(left.getPublic());
  private final String rightKid = EcKeys.keyId(right.getPublic());

  private List<Sealed> sealed(String jobId) {
    Map<String, java.security.PublicKey> recipients = new LinkedHashMap<>();
    recipients.put(leftKid, left.getPublic());
    recipients.put(rightKid, right.getPublic());
    return TokenSeal.seal(jobId, TOKEN, recipients);
  }

  @Test
  void eachRecipientOpensItsOwnCopy() throws Exception {
    List<Sealed> copies = sealed("job-1");
    assertEquals(2, copies.size());
    assertEquals(leftKid, copies.get(0).recipientKid());
    assertEquals(TOKEN, TokenSeal.open("job-1", copies.get(0), leftKid, left.getPrivate()));
    assertEquals(TOKEN, TokenSeal.open("job-1", copies.get(1), rightKid, right.getPrivate()));
  }

  @Test
  void theCopiesShareOneFreshEphemeralKeyPerJobAndHideTheToken() {
    List<Sealed> job1 = sealed("job-1");
    List<Sealed> job2 = sealed("job-1");
    assertArrayEquals(job1.get(0).ephemeralKey(), job1.get(1).ephemeralKey());
    assertFalse(
        java.util.Arrays.equals(job1.get(0).ephemeralKey(), job2.get(0).ephemeralKey()),
        "a fresh ephemeral key each time");
    for (Sealed copy : job1) {
      assertEquals(12, copy.nonce().length);
      assertEquals(TOKEN.length() + 16, copy.ciphertext().length, "the token and the GCM tag");
      assertFalse(
          new String(copy.ciphertext(), StandardCharsets.ISO_8859_1).contains("eyJ"),
          "not in clear");
    }
    assertNotEquals(
        HexFormat.of().formatHex(job1.get(0).ciphertext()),
        HexFormat.of().formatHex(job2.get(0).ciphertext()));
  }

  @Test
  void aCopyDoesNotOpenWithAnotherKey() {
    Sealed forLeft = sealed("job-1").get(0);
    assertThrows(
        GeneralSecurityException.class,
        () -> TokenSeal.open("job-1", forLeft, rightKid, right.getPrivate()));
    // Relabelled for the right key, it still is the left key's: the kid is in the key derivation.
    Sealed relabelled =
        new Sealed(rightKid, forLeft.ephemeralKey(), forLeft.nonce(), forLeft.ciphertext());
    assertThrows(
        GeneralSecurityException.class,
        () -> TokenSeal.open("job-1", relabelled, rightKid, right.getPrivate()));
  }

  @Test
  void aCopyOpensForItsOwnJobOnly() {
    Sealed copy = sealed("job-1").get(0);
    assertThrows(
        GeneralSecurityException.class,
        () -> TokenSeal.open("job-2", copy, leftKid, left.getPrivate()));
  }

  @Test
  void anAlteredCopyDoesNotOpen() {
    Sealed copy = sealed("job-1").get(0);
    byte[] ciphertext = copy.ciphertext().clone();
    ciphertext[0] ^= 1;
    byte[] nonce = copy.nonce().clone();
    nonce[0] ^= 1;
    for (Sealed altered :
        List.of(
            new Sealed(leftKid, copy.ephemeralKey(), copy.nonce(), ciphertext),
            new Sealed(leftKid, copy.ephemeralKey(), nonce, copy.ciphertext()),
            new Sealed(
                leftKid, EcKeys.generate().getPublic().getEncoded(), copy.nonce(), ciphertext),
            new Sealed(leftKid, new byte[] {1, 2, 3}, copy.nonce(), copy.ciphertext()),
            new Sealed(leftKid, copy.ephemeralKey(), new byte[0], copy.ciphertext()))) {
      assertThrows(
          GeneralSecurityException.class,
          () -> TokenSeal.open("job-1", altered, leftKid, left.getPrivate()));
    }
  }

  @Test
  void anEphemeralKeyOffTheCurveIsRefused() throws Exception {
    Sealed copy = sealed("job-1").get(0);
    ECPublicKey genuine = (ECPublicKey) EcKeys.publicFromDer(copy.ephemeralKey());
    ECPoint off =
        new ECPoint(genuine.getW().getAffineX(), genuine.getW().getAffineY().add(BigInteger.ONE));
    byte[] invalid =
        KeyFactory.getInstance("EC")
            .generatePublic(new ECPublicKeySpec(off, genuine.getParams()))
            .getEncoded();
    Sealed attack = new Sealed(leftKid, invalid, copy.nonce(), copy.ciphertext());
    GeneralSecurityException refused =
        assertThrows(
            GeneralSecurityException.class,
            () -> TokenSeal.open("job-1", attack, leftKid, left.getPrivate()));
    assertEquals("Point is not on curve", refused.getMessage());
  }

  @Test
  void hkdfMatchesRfc5869WithAnEmptySalt() throws Exception {
    // RFC 5869 test case 3: SHA-256, 22 bytes of 0x0b, no salt, no info.
    byte[] okm =
        TokenSeal.hkdfSha256(
            HexFormat.of().parseHex("0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b"),
            new byte[0],
            42);
    assertEquals(
        "8da4e775a563c18f715f802a063c5a31b8a11f5c5ee1879ec3454e5f3c738d2d" + "9d201395faa4b61a96c8",
        HexFormat.of().formatHex(okm));
  }
}
