package ai.spboucher.spbgit.common;

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
import java.util.function.Function;

/**
 * The JOSE pieces the job token ({@code hooks}) and {@link DetachedJws} share, written against the
 * JCA: ES256 in the JOSE signature form (R || S, 64 bytes), unpadded base64url in its one canonical
 * spelling, and strict UTF-8 JSON. Thread-safe.
 */
public final class Jose {

  /** The only algorithm. */
  public static final String ES256_ALGORITHM = "ES256";

  /** The length of an ES256 signature in the JOSE form. */
  public static final int ES256_SIGNATURE_LENGTH = 64;

  /**
   * Strict on purpose: a duplicate member or anything after the object would let two JSON parsers
   * read the same signed bytes differently (RFC 7515 section 4 allows rejecting duplicates; here
   * they are always rejected).
   */
  public static final ObjectMapper JSON =
      JsonMapper.builder()
          .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
          .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
          .build();

  private static final Base64.Encoder BASE64URL = Base64.getUrlEncoder().withoutPadding();

  /**
   * ES256 taking the JOSE signature form as it is, so no DER is built by hand. One instance per
   * thread: a JCA object is not thread-safe, and looking one up through the providers on every
   * verification was a measurable part of the gate's cost (docs/benchmarks.md); {@code init*}
   * resets it before each use.
   */
  private static final ThreadLocal<Signature> ES256 =
      ThreadLocal.withInitial(
          () -> {
            try {
              return Signature.getInstance("SHA256withECDSAinP1363Format");
            } catch (GeneralSecurityException e) {
              throw new IllegalStateException(
                  "ES256 (SHA256withECDSAinP1363Format) is not available", e);
            }
          });

  private Jose() {}

  /** Unpadded base64url. */
  public static String base64url(byte[] bytes) {
    return BASE64URL.encodeToString(bytes);
  }

  /** Unpadded base64url of {@code json}'s UTF-8 text. */
  public static String base64url(JsonNode json) {
    return base64url(json.toString().getBytes(StandardCharsets.UTF_8));
  }

  /**
   * Decodes unpadded base64url (RFC 7515, section 2) and accepts only its one canonical spelling:
   * no padding and no stray low bits, so a signed text has exactly one spelling that verifies.
   *
   * @param refusal makes the exception for {@code "not base64url"} or {@code "not canonical
   *     base64url"}
   */
  public static <E extends Exception> byte[] decodeBase64url(
      String part, Function<String, E> refusal) throws E {
    byte[] bytes;
    try {
      bytes = Base64.getUrlDecoder().decode(part);
    } catch (IllegalArgumentException e) {
      throw refusal.apply("not base64url");
    }
    if (!base64url(bytes).equals(part)) {
      throw refusal.apply("not canonical base64url");
    }
    return bytes;
  }

  /**
   * The JSON object in {@code bytes}, read as strict UTF-8 (JOSE headers and JWT claims are UTF-8,
   * RFC 7515, 7519; without this, Jackson would also guess UTF-16/32); null when it is JSON but not
   * an object.
   */
  public static JsonNode jsonObject(byte[] bytes)
      throws CharacterCodingException, JsonProcessingException {
    String text =
        StandardCharsets.UTF_8
            .newDecoder()
            .onMalformedInput(CodingErrorAction.REPORT)
            .onUnmappableCharacter(CodingErrorAction.REPORT)
            .decode(ByteBuffer.wrap(bytes))
            .toString();
    JsonNode node = JSON.readTree(text);
    return node != null && node.isObject() ? node : null;
  }

  /** {@code node.field} when it is a string, otherwise null. */
  public static String text(JsonNode node, String field) {
    JsonNode value = node.get(field);
    return value != null && value.isTextual() ? value.textValue() : null;
  }

  /** The ES256 signature of {@code signingInput} (its ASCII bytes) in the JOSE form. */
  public static byte[] sign(PrivateKey key, String signingInput) throws GeneralSecurityException {
    Signature es256 = ES256.get();
    es256.initSign(key);
    es256.update(signingInput.getBytes(StandardCharsets.US_ASCII));
    return es256.sign();
  }

  /**
   * Whether {@code signature} (JOSE form) is {@code key}'s ES256 signature of {@code signingInput};
   * false for one of the wrong length or a key that cannot verify.
   */
  public static boolean verifies(PublicKey key, String signingInput, byte[] signature) {
    if (signature.length != ES256_SIGNATURE_LENGTH) {
      return false;
    }
    try {
      Signature es256 = ES256.get();
      es256.initVerify(key);
      es256.update(signingInput.getBytes(StandardCharsets.US_ASCII));
      return es256.verify(signature);
    } catch (GeneralSecurityException e) {
      return false;
    }
  }
}
