package ai.spboucher.spbgit.common;

import ai.spboucher.spbgit.common.InvalidSignatureException.Problem;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import java.nio.charset.CharacterCodingException;
import java.security.GeneralSecurityException;
import java.security.PrivateKey;
import java.security.PublicKey;
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
  public static final String ALGORITHM = Jose.ES256_ALGORITHM;

  /** Longer than any header this class writes by far; longer values are refused unread. */
  private static final int MAX_LENGTH = 1024;

  private static final Set<String> HEADER_NAMES = Set.of("alg", "kid", "typ");

  private DetachedJws() {}

  /**
   * Signs {@code payload} as a message of {@code type} with {@code key}, named {@code keyId}.
   *
   * @throws IllegalStateException when the key cannot sign (not an EC private key)
   */
  public static String sign(String type, String keyId, PrivateKey key, byte[] payload) {
    String header =
        Jose.base64url(
            Jose.JSON.createObjectNode().put("alg", ALGORITHM).put("kid", keyId).put("typ", type));
    try {
      return header + ".." + Jose.base64url(Jose.sign(key, signingInput(header, payload)));
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
    if (!ALGORITHM.equals(Jose.text(header, "alg"))) {
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
    if (!type.equals(Jose.text(header, "typ"))) {
      throw new InvalidSignatureException(
          Problem.TYPE, "signature is for another kind of message, not " + type);
    }
    String kid = Jose.text(header, "kid");
    PublicKey key = kid == null ? null : keys.apply(kid);
    if (key == null) {
      throw new InvalidSignatureException(
          Problem.UNKNOWN_KEY, "signed with an unknown key " + (kid == null ? "(no kid)" : kid));
    }
    byte[] signature = decode(parts[2], "signature");
    if (!Jose.verifies(key, signingInput(parts[0], payload), signature)) {
      throw new InvalidSignatureException(
          Problem.MISMATCH, "signature does not match the message (forged or altered)");
    }
    return kid;
  }

  private static String signingInput(String encodedHeader, byte[] payload) {
    return encodedHeader + "." + Jose.base64url(payload);
  }

  private static JsonNode header(String part) throws InvalidSignatureException {
    try {
      JsonNode node = Jose.jsonObject(decode(part, "header"));
      if (node != null) {
        return node;
      }
    } catch (CharacterCodingException | JsonProcessingException e) {
      // Reported below, as for a JSON value that is no object.
    }
    throw new InvalidSignatureException(Problem.MALFORMED, "signature header is not a JSON object");
  }

  /** Unpadded base64url in its one canonical spelling, so a signature has exactly one text. */
  private static byte[] decode(String part, String what) throws InvalidSignatureException {
    return Jose.decodeBase64url(
        part,
        why ->
            new InvalidSignatureException(Problem.MALFORMED, "signature " + what + " is garbled"));
  }
}
