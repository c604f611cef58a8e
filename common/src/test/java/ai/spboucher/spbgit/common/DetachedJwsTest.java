package ai.spboucher.spbgit.common;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.spboucher.spbgit.common.InvalidSignatureException.Problem;
import java.nio.charset.StandardCharsets;
import java.security.KeyPair;
import java.security.PublicKey;
import java.security.Signature;
import java.util.Base64;
import java.util.Map;
import java.util.function.Function;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import org.junit.jupiter.api.Test;

class DetachedJwsTest {

  private static final String TYPE = "spb-job-request";
  private static final Base64.Encoder B64 = Base64.getUrlEncoder().withoutPadding();

  private final KeyPair key = EcKeys.generate();
  private final String kid = EcKeys.keyId(key.getPublic());
  private final Function<String, PublicKey> keys = Map.of(kid, key.getPublic())::get;
  private final byte[] message = "the request's bytes".getBytes(StandardCharsets.UTF_8);

  @Test
  void aSignatureVerifiesOverTheSameBytesAndNamesItsKey() throws Exception {
    String jws = DetachedJws.sign(TYPE, kid, key.getPrivate(), message);
    assertEquals(kid, DetachedJws.verify(jws, message, TYPE, keys));
  }

  @Test
  void theSerializationIsCompactWithTheDetachedPayloadLeftOut() {
    String jws = DetachedJws.sign(TYPE, kid, key.getPrivate(), message);
    String[] parts = jws.split("\\.", -1);
    assertEquals(3, parts.length);
    assertEquals("", parts[1], "RFC 7515 appendix F: the payload part is empty");
    assertEquals(
        "{\"alg\":\"ES256\",\"kid\":\"" + kid + "\",\"typ\":\"" + TYPE + "\"}",
        new String(Base64.getUrlDecoder().decode(parts[0]), StandardCharsets.UTF_8));
    assertEquals(64, Base64.getUrlDecoder().decode(parts[2]).length, "JOSE r||s, not DER");
  }

  @Test
  void theSigningInputIsTheEncodedHeaderDotTheEncodedMessage() throws Exception {
    String jws = DetachedJws.sign(TYPE, kid, key.getPrivate(), message);
    String header = jws.substring(0, jws.indexOf('.'));
    Signature es256 = Signature.getInstance("SHA256withECDSAinP1363Format");
    es256.initVerify(key.getPublic());
    es256.update((header + "." + B64.encodeToString(message)).getBytes(StandardCharsets.US_ASCII));
    assertTrue(
        es256.verify(Base64.getUrlDecoder().decode(jws.substring(jws.lastIndexOf('.') + 1))));
  }

  @Test
  void refusesAMessageWithOneByteAltered() {
    String jws = DetachedJws.sign(TYPE, kid, key.getPrivate(), message);
    byte[] altered = message.clone();
    altered[3] ^= 1;
    assertProblem(Problem.MISMATCH, () -> DetachedJws.verify(jws, altered, TYPE, keys));
  }

  @Test
  void refusesASignatureByAnotherKeyUnderAKnownKid() {
    KeyPair other = EcKeys.generate();
    String forged = DetachedJws.sign(TYPE, kid, other.getPrivate(), message);
    assertProblem(Problem.MISMATCH, () -> DetachedJws.verify(forged, message, TYPE, keys));
  }

  @Test
  void refusesAnUnknownKid() {
    KeyPair other = EcKeys.generate();
    String jws =
        DetachedJws.sign(TYPE, EcKeys.keyId(other.getPublic()), other.getPrivate(), message);
    assertProblem(Problem.UNKNOWN_KEY, () -> DetachedJws.verify(jws, message, TYPE, keys));
    assertProblem(
        Problem.UNKNOWN_KEY,
        () -> DetachedJws.verify(signed(header("ES256", null, TYPE)), message, TYPE, keys));
  }

  @Test
  void refusesAHeaderOfAnotherType() {
    String cancel = DetachedJws.sign("spb-cancel-job", kid, key.getPrivate(), message);
    assertProblem(Problem.TYPE, () -> DetachedJws.verify(cancel, message, TYPE, keys));
    assertProblem(
        Problem.TYPE,
        () -> DetachedJws.verify(signed(header("ES256", kid, null)), message, TYPE, keys));
  }

  @Test
  void refusesEveryAlgorithmButEs256() throws Exception {
    for (String alg : new String[] {"none", "HS256", "ES384", "RS256", "es256"}) {
      assertProblem(
          Problem.ALGORITHM,
          () -> DetachedJws.verify(signed(header(alg, kid, TYPE)), message, TYPE, keys));
    }
    // The classic confusion: an HMAC keyed with the public key.
    String header = B64.encodeToString(header("HS256", kid, TYPE).getBytes(StandardCharsets.UTF_8));
    Mac hmac = Mac.getInstance("HmacSHA256");
    hmac.init(new SecretKeySpec(key.getPublic().getEncoded(), "HmacSHA256"));
    String mac =
        B64.encodeToString(
            hmac.doFinal(
                (header + "." + B64.encodeToString(message)).getBytes(StandardCharsets.US_ASCII)));
    assertProblem(
        Problem.ALGORITHM, () -> DetachedJws.verify(header + ".." + mac, message, TYPE, keys));
  }

  @Test
  void refusesHeaderParametersThatChangeHowTheSignatureIsRead() {
    for (String extra : new String[] {",\"crit\":[\"b64\"],\"b64\":false", ",\"jku\":\"x\""}) {
      String header =
          "{\"alg\":\"ES256\",\"kid\":\"" + kid + "\",\"typ\":\"" + TYPE + "\"" + extra + "}";
      assertProblem(
          Problem.ALGORITHM, () -> DetachedJws.verify(signed(header), message, TYPE, keys));
    }
  }

  @Test
  void refusesWhatIsNoDetachedCompactJws() {
    String jws = DetachedJws.sign(TYPE, kid, key.getPrivate(), message);
    String[] parts = jws.split("\\.", -1);
    assertProblem(Problem.MISSING, () -> DetachedJws.verify(null, message, TYPE, keys));
    assertProblem(Problem.MISSING, () -> DetachedJws.verify("", message, TYPE, keys));
    for (String bad :
        new String[] {
          parts[0] + "." + B64.encodeToString(message) + "." + parts[2], // payload attached
          parts[0] + "." + parts[2],
          parts[0] + ".." + parts[2] + ".",
          parts[0] + ".." + parts[2] + "=", // not canonical base64url
          "e30.." + parts[2], // {} : no alg
          B64.encodeToString("[1]".getBytes(StandardCharsets.UTF_8)) + ".." + parts[2],
          B64.encodeToString(
                  ("{\"alg\":\"ES256\",\"alg\":\"ES256\",\"kid\":\"" + kid + "\",\"typ\":\"x\"}")
                      .getBytes(StandardCharsets.UTF_8))
              + ".."
              + parts[2], // a duplicate member
          "x".repeat(2000)
        }) {
      InvalidSignatureException e =
          assertThrows(
              InvalidSignatureException.class, () -> DetachedJws.verify(bad, message, TYPE, keys));
      assertTrue(
          e.problem() == Problem.MALFORMED || e.problem() == Problem.ALGORITHM,
          bad + ": " + e.problem());
    }
  }

  @Test
  void refusesATruncatedOrLengthenedSignature() {
    String jws = DetachedJws.sign(TYPE, kid, key.getPrivate(), message);
    String header = jws.substring(0, jws.indexOf('.'));
    byte[] signature = Base64.getUrlDecoder().decode(jws.substring(jws.lastIndexOf('.') + 1));
    byte[] shorter = java.util.Arrays.copyOf(signature, 63);
    byte[] longer = java.util.Arrays.copyOf(signature, 65);
    for (byte[] bad : new byte[][] {shorter, longer, new byte[64]}) {
      assertProblem(
          Problem.MISMATCH,
          () -> DetachedJws.verify(header + ".." + B64.encodeToString(bad), message, TYPE, keys));
    }
  }

  /** A detached JWS of {@code header}, genuinely signed with the test's key. */
  private String signed(String header) {
    String encoded = B64.encodeToString(header.getBytes(StandardCharsets.UTF_8));
    try {
      Signature es256 = Signature.getInstance("SHA256withECDSAinP1363Format");
      es256.initSign(key.getPrivate());
      es256.update(
          (encoded + "." + B64.encodeToString(message)).getBytes(StandardCharsets.US_ASCII));
      return encoded + ".." + B64.encodeToString(es256.sign());
    } catch (java.security.GeneralSecurityException e) {
      throw new IllegalStateException(e);
    }
  }

  private static String header(String alg, String kid, String typ) {
    StringBuilder json = new StringBuilder("{\"alg\":\"" + alg + "\"");
    if (kid != null) {
      json.append(",\"kid\":\"").append(kid).append('"');
    }
    if (typ != null) {
      json.append(",\"typ\":\"").append(typ).append('"');
    }
    return json.append('}').toString();
  }

  private interface Verification {
    void run() throws Exception;
  }

  private static void assertProblem(Problem expected, Verification verification) {
    InvalidSignatureException e = assertThrows(InvalidSignatureException.class, verification::run);
    assertEquals(expected, e.problem(), e.getMessage());
  }
}
