package ai.spboucher.spbgit.gateway;

import ai.spboucher.spbgit.hooks.JobTokenVerifier;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.auth.JWTOptions;
import io.vertx.ext.auth.PubSecKeyOptions;
import io.vertx.ext.auth.jwt.JWTAuth;
import io.vertx.ext.auth.jwt.JWTAuthOptions;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.Base64;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * Job tokens an attacker might present: signed with the gateway's real key but with bad claims, or
 * forged with another algorithm. Tests use these to try to get past the gate.
 */
public final class ForgedTokens {

  private final JWTAuth realKey;
  private final String keyId;
  private final byte[] publicPem;

  ForgedTokens(Vertx vertx, Path dataDir) throws Exception {
    Path keys = dataDir.resolve("keys");
    publicPem = Files.readAllBytes(keys.resolve("job-token-signing.pub.pem"));
    keyId =
        ai.spboucher.spbgit.hooks.PublicKeys.keyId(
            ai.spboucher.spbgit.hooks.PublicKeys.read(keys.resolve("job-token-signing.pub.pem")));
    realKey =
        JWTAuth.create(
            vertx,
            new JWTAuthOptions()
                .addPubSecKey(
                    new PubSecKeyOptions()
                        .setAlgorithm("ES256")
                        .setBuffer(Files.readString(keys.resolve("job-token-signing.pem")))));
  }

  /**
   * Claims a correctly issued token for {@code job} on {@code repo} would carry, valid for ten
   * minutes.
   */
  public static JsonObject validClaims(String repo, String job) {
    long now = Instant.now().getEpochSecond();
    return new JsonObject()
        .put("iss", JobTokenVerifier.ISSUER)
        .put("aud", JobTokenVerifier.AUDIENCE)
        .put("sub", job)
        .put("jti", "forged-" + System.nanoTime())
        .put("iat", now)
        .put("nbf", now)
        .put("exp", now + 600)
        .put("scope", new JsonObject().put("repo", repo).put("refs", "refs/agents/" + job + "/*"))
        .put("cap", new JsonArray().add("push:agent-ref"));
  }

  /** Signed with the gateway's real ES256 key: only the claims can make it invalid. */
  public String signed(JsonObject claims) {
    return realKey.generateToken(
        claims,
        new JWTOptions()
            .setAlgorithm("ES256")
            .setNoTimestamp(true)
            .setHeader(new JsonObject().put("kid", keyId)));
  }

  /** The unsigned {@code alg: none} form. */
  public String algNone(JsonObject claims) {
    return encode(new JsonObject().put("alg", "none").put("typ", "JWT").put("kid", keyId))
        + "."
        + encode(claims)
        + ".";
  }

  /** HS256 keyed with the gateway's public key: the classic key-confusion forgery. */
  String hs256WithPublicKey(JsonObject claims) throws Exception {
    String signingInput =
        encode(new JsonObject().put("alg", "HS256").put("typ", "JWT").put("kid", keyId))
            + "."
            + encode(claims);
    Mac mac = Mac.getInstance("HmacSHA256");
    mac.init(new SecretKeySpec(publicPem, "HmacSHA256"));
    return signingInput
        + "."
        + Base64.getUrlEncoder()
            .withoutPadding()
            .encodeToString(mac.doFinal(signingInput.getBytes(StandardCharsets.US_ASCII)));
  }

  /** A valid token with one character of its signature changed. */
  public static String tamperedSignature(String token) {
    int i = token.lastIndexOf('.') + 5;
    char replacement = token.charAt(i) == 'A' ? 'B' : 'A';
    return token.substring(0, i) + replacement + token.substring(i + 1);
  }

  /** A valid token whose payload was edited after signing (here: widened to another repository). */
  public static String tamperedPayload(String token, JsonObject newClaims) {
    String[] parts = token.split("\\.");
    return parts[0] + "." + encode(newClaims) + "." + parts[2];
  }

  public static JsonObject claimsOf(String token) {
    return new JsonObject(
        new String(Base64.getUrlDecoder().decode(token.split("\\.")[1]), StandardCharsets.UTF_8));
  }

  private static String encode(JsonObject json) {
    return Base64.getUrlEncoder()
        .withoutPadding()
        .encodeToString(json.encode().getBytes(StandardCharsets.UTF_8));
  }
}
