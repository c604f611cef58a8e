package ai.spboucher.spbgit.hooks;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.PublicKey;
import java.security.Signature;
import java.security.spec.ECGenParameterSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.Base64;
import java.util.UUID;

/**
 * Hand-built job tokens for tests: compact JWS over Jackson JSON, signed with a real P-256 key
 * through the JCA. Deliberately independent of {@link JobTokenVerifier} (no shared encoding code)
 * so the tests check the verifier against the JWS format itself, not against its own helpers.
 */
final class TestTokens {

  static final ObjectMapper JSON = new ObjectMapper();

  private final KeyPair keys;

  TestTokens(KeyPair keys) {
    this.keys = keys;
  }

  /** A fresh EC P-256 key pair. */
  static KeyPair newKeyPair() {
    try {
      KeyPairGenerator generator = KeyPairGenerator.getInstance("EC");
      generator.initialize(new ECGenParameterSpec("secp256r1"));
      return generator.generateKeyPair();
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException(e);
    }
  }

  PublicKey publicKey() {
    return keys.getPublic();
  }

  /** The header the gateway writes: ES256, JWT, and the kid of this key. */
  ObjectNode header() {
    return JSON.createObjectNode()
        .put("alg", "ES256")
        .put("typ", "JWT")
        .put("kid", PublicKeys.keyId(publicKey()));
  }

  /**
   * Complete, valid claims for {@code jobId} on {@code repo}, issued at {@code issuedAt} for {@code
   * lifetime}.
   */
  static ObjectNode claims(String jobId, String repo, Instant issuedAt, Duration lifetime) {
    ObjectNode claims =
        JSON.createObjectNode()
            .put("iss", JobTokenVerifier.ISSUER)
            .put("aud", JobTokenVerifier.AUDIENCE)
            .put("sub", jobId)
            .put("jti", UUID.randomUUID().toString())
            .put("iat", issuedAt.getEpochSecond())
            .put("nbf", issuedAt.getEpochSecond())
            .put("exp", issuedAt.plus(lifetime).getEpochSecond());
    claims.putObject("scope").put("repo", repo).put("refs", "refs/agents/" + jobId + "/*");
    claims.putArray("cap").add(JobTokenClaims.PUSH_AGENT_REF);
    return claims;
  }

  /** A valid token for {@code jobId} on {@code repo}. */
  String mint(String jobId, String repo, Instant issuedAt, Duration lifetime) {
    return sign(header(), claims(jobId, repo, issuedAt, lifetime));
  }

  /**
   * Signs {@code header.claims} with ES256 whatever the header says, so tests can lie in the
   * header.
   */
  String sign(JsonNode header, JsonNode claims) {
    String signingInput = encode(header) + "." + encode(claims);
    return signingInput + "." + base64url(es256(signingInput));
  }

  /** The raw JOSE signature (R || S, 64 bytes) of {@code signingInput}. */
  byte[] es256(String signingInput) {
    try {
      Signature ecdsa = Signature.getInstance("SHA256withECDSA");
      ecdsa.initSign(keys.getPrivate());
      ecdsa.update(signingInput.getBytes(StandardCharsets.US_ASCII));
      return derToJose(ecdsa.sign());
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException(e);
    }
  }

  static String encode(JsonNode json) {
    try {
      return base64url(JSON.writeValueAsBytes(json));
    } catch (JsonProcessingException e) {
      throw new IllegalStateException(e);
    }
  }

  static String base64url(byte[] bytes) {
    return Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
  }

  static String base64url(String text) {
    return base64url(text.getBytes(StandardCharsets.UTF_8));
  }

  /** The claims part of {@code token}, decoded, for tests that tamper with it. */
  static ObjectNode payloadOf(String token) {
    try {
      return (ObjectNode) JSON.readTree(Base64.getUrlDecoder().decode(token.split("\\.")[1]));
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }

  /** DER {@code SEQUENCE { INTEGER r, INTEGER s }} to the fixed-width JOSE form. */
  static byte[] derToJose(byte[] der) {
    int offset = 2;
    if (der[0] != 0x30) {
      throw new IllegalArgumentException("not a DER sequence");
    }
    if ((der[1] & 0x80) != 0) {
      offset += der[1] & 0x7f;
    }
    byte[] jose = new byte[64];
    for (int component = 0; component < 2; component++) {
      if (der[offset] != 0x02) {
        throw new IllegalArgumentException("not a DER integer");
      }
      int length = der[offset + 1];
      byte[] value = Arrays.copyOfRange(der, offset + 2, offset + 2 + length);
      int skip = 0;
      while (value.length - skip > 32 && value[skip] == 0) {
        skip++;
      }
      int width = value.length - skip;
      System.arraycopy(value, skip, jose, component * 32 + (32 - width), width);
      offset += 2 + length;
    }
    return jose;
  }
}
