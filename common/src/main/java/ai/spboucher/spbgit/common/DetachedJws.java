package ai.spboucher.spbgit.common;

import ai.spboucher.spbgit.common.InvalidSignatureException.Problem;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.Signature;
import java.util.Base64;
import java.util.Iterator;
import java.util.Set;
import java.util.function.Function;

/**
 * A JWS with a detached payload (RFC 7515, appendix F), ES256 only: the compact serialization with
 * its payload part left empty, {@code b64url(header) ".." b64url(signature)}, whose signing input
 * is {@code b64url(header) "." b64url(payload)}. The protected header is exactly {@code {"alg":
 * "ES256", "kid": ..., "typ": ...}}: the key by id (so keys can be rotated) and what kind of
 * message the payload is, so that a signature over one kind never verifies as another. Signatures
 * are in the JOSE form (R || S, 64 bytes).
 *
 * <p>Written against the JCA, like the job-token verifier: the algorithm and type are checked
 * before the header is used for anything else, so {@code alg: none} or an HMAC "signed" with the
 * public key have no path to success. Thread-safe; signing and verifying are CPU only (one
 * elliptic-curve operation each, well under a millisecond).
 */
public final class DetachedJws {

  /** The only algorithm. */
  public static final String ALGORITHM = "ES256";

  /** Longer than any header this class writes by far; longer values are refused unread. */
  private static final int MAX_LENGTH = 1024;

  private static final int ES256_SIGNATURE_LENGTH = 64;
  private static final Set<String> HEADER_NAMES = Set.of("alg", "kid", "typ");

  /** Strict, so that two JSON readers cannot read one signed header two ways. */
  private static final ObjectMapper JSON =
      JsonMapper.builder()
          .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
          .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
          .build();

  private static final Base64.Encoder BASE64URL = Base64.getUrlEncoder().withoutPadding();

  /** One per thread: JCA objects are not thread-safe; {@code init*} resets one before each use. */
  private static final ThreadLocal<Signature> ES256 =
      ThreadLocal.withInitial(
          () -> {
            try {
              return Signature.getInstance("SHA256withECDSAinP1363Format");
            } catch (GeneralSecurityException e) {
              throw new IllegalStateException("ES256 is not available", e);
            }
          });

  private DetachedJws() {}

  /**
   * Signs {@code payload} as a message of {@code type} with {@code key}, named {@code keyId}.
   *
   * @throws IllegalStateException when the key cannot sign (not an EC private key)
   */
  public static String sign(String type, String keyId, PrivateKey key, byte[] payload) {
    String header =
        BASE64URL.encodeToString(
            JSON.createObjectNode()
                .put("alg", ALGORITHM)
                .put("kid", keyId)
                .put("typ", type)
                .toString()
                .getBytes(StandardCharsets.UTF_8));
    try {
      Signature es256 = ES256.get();
      es256.initSign(key);
      es256.update(signingInput(header, payload));
      return header + ".." + BASE64URL.encodeToString(es256.sign());
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("cannot sign with key " + keyId + ": " + e.getMessage(), e);
    }
  }

  /**
   * Verifies that {@code jws} is a signature of {@code type} over exactly {@code payload} by a key
   * {@code keys} knows; returns that key's id.
   *
   * @param keys the trusted public keys by id; null for an id it does not know
   * @throws InvalidSignatureException saying what was wrong
   */
  public static String verify(
      String jws, byte[] payload, String type, Function<String, PublicKey> keys)
      throws InvalidSignatureException {
    if (jws == null || jws.isEmpty()) {
      throw new InvalidSignatureException(Problem.MISSING, "not signed");
    }
    if (jws.length() > MAX_LENGTH) {
      throw new InvalidSignatureException(Problem.MALFORMED, "signature too long");
    }
    String[] parts = jws.split("\\.", -1);
    if (parts.length != 3 || !parts[1].isEmpty()) {
      throw new InvalidSignatureException(
          Problem.MALFORMED, "signature is not a detached compact JWS");
    }
    JsonNode header = header(parts[0]);
    if (!ALGORITHM.equals(text(header, "alg"))) {
      throw new InvalidSignatureException(Problem.ALGORITHM, "signature algorithm is not ES256");
    }
    for (Iterator<String> names = header.fieldNames(); names.hasNext(); ) {
      String name = names.next();
      if (!HEADER_NAMES.contains(name)) {
        // crit, b64 (RFC 7797) and the like change how the signature is read: none is taken.
        throw new InvalidSignatureException(
            Problem.ALGORITHM, "signature header has an unsupported parameter '" + name + "'");
      }
    }
    if (!type.equals(text(header, "typ"))) {
      throw new InvalidSignatureException(
          Problem.TYPE, "signature is for another kind of message, not " + type);
    }
    String kid = text(header, "kid");
    PublicKey key = kid == null ? null : keys.apply(kid);
    if (key == null) {
      throw new InvalidSignatureException(
          Problem.UNKNOWN_KEY, "signed with an unknown key " + (kid == null ? "(no kid)" : kid));
    }
    byte[] signature = decode(parts[2], "signature");
    if (signature.length != ES256_SIGNATURE_LENGTH || !matches(key, parts[0], payload, signature)) {
      throw new InvalidSignatureException(
          Problem.MISMATCH, "signature does not match the message (forged or altered)");
    }
    return kid;
  }

  private static boolean matches(PublicKey key, String header, byte[] payload, byte[] signature) {
    try {
      Signature es256 = ES256.get();
      es256.initVerify(key);
      es256.update(signingInput(header, payload));
      return es256.verify(signature);
    } catch (GeneralSecurityException e) {
      return false;
    }
  }

  private static byte[] signingInput(String encodedHeader, byte[] payload) {
    return (encodedHeader + "." + BASE64URL.encodeToString(payload))
        .getBytes(StandardCharsets.US_ASCII);
  }

  private static JsonNode header(String part) throws InvalidSignatureException {
    try {
      String text =
          StandardCharsets.UTF_8
              .newDecoder()
              .onMalformedInput(CodingErrorAction.REPORT)
              .onUnmappableCharacter(CodingErrorAction.REPORT)
              .decode(ByteBuffer.wrap(decode(part, "header")))
              .toString();
      JsonNode node = JSON.readTree(text);
      if (node == null || !node.isObject()) {
        throw new InvalidSignatureException(
            Problem.MALFORMED, "signature header is not a JSON object");
      }
      return node;
    } catch (CharacterCodingException | JsonProcessingException e) {
      throw new InvalidSignatureException(
          Problem.MALFORMED, "signature header is not a JSON object");
    }
  }

  private static String text(JsonNode node, String field) {
    JsonNode value = node.get(field);
    return value != null && value.isTextual() ? value.textValue() : null;
  }

  /** Unpadded base64url in its one canonical spelling, so a signature has exactly one text. */
  private static byte[] decode(String part, String what) throws InvalidSignatureException {
    byte[] bytes;
    try {
      bytes = Base64.getUrlDecoder().decode(part);
    } catch (IllegalArgumentException e) {
      throw new InvalidSignatureException(Problem.MALFORMED, "signature " + what + " is garbled");
    }
    if (!BASE64URL.encodeToString(bytes).equals(part)) {
      throw new InvalidSignatureException(Problem.MALFORMED, "signature " + what + " is garbled");
    }
    return bytes;
  }
}
