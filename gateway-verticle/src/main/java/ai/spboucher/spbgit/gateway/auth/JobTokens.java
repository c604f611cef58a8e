package ai.spboucher.spbgit.gateway.auth;

import ai.spboucher.spbgit.hooks.InvalidJobTokenException;
import ai.spboucher.spbgit.hooks.JobTokenClaims;
import ai.spboucher.spbgit.hooks.JobTokenVerifier;
import ai.spboucher.spbgit.hooks.RefScope;
import ai.spboucher.spbgit.hooks.RevocationList;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.auth.JWTOptions;
import io.vertx.ext.auth.PubSecKeyOptions;
import io.vertx.ext.auth.jwt.JWTAuth;
import io.vertx.ext.auth.jwt.JWTAuthOptions;
import java.io.IOException;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.security.PublicKey;

/**
 * Issues, verifies and revokes job tokens (design 3.1): ES256 JWTs scoped to one repository and to
 * {@code refs/agents/<job>/*}, living at most two hours. Signing goes through Vert.x Auth JWT; verification
 * through the shared {@link JobTokenVerifier}, the same code the stand-alone hook runs.
 *
 * <p>{@link #issue} and {@link #verify} are CPU-only and safe on any thread; {@link #revoke} writes the
 * revocation list and blocks.
 */
public final class JobTokens {

  private static final SecureRandom RANDOM = new SecureRandom();

  private final JWTAuth signer;
  private final SigningKey key;
  private final JobTokenVerifier verifier;
  private final RevocationList revocations;
  private final Clock clock;

  public JobTokens(Vertx vertx, SigningKey key, RevocationList revocations, Clock clock) {
    this(vertx, key, Map.of(key.keyId(), key.publicKey()), revocations, clock);
  }

  /** @param verificationKeys the keys tokens may be signed with, by kid: the current one and retired ones */
  public JobTokens(Vertx vertx, SigningKey key, Map<String, PublicKey> verificationKeys, RevocationList revocations,
                   Clock clock) {
    this.key = key;
    this.revocations = revocations;
    this.clock = clock;
    this.signer = JWTAuth.create(vertx, new JWTAuthOptions().addPubSecKey(new PubSecKeyOptions()
        .setAlgorithm(JobTokenVerifier.ALGORITHM).setId(key.keyId()).setBuffer(key.privateKeyPem())));
    this.verifier = new JobTokenVerifier(verificationKeys, revocations::isRevoked, clock);
  }

  /** A signed token for {@code jobId} on {@code repo}, valid from now for {@code ttl} (at most two hours). */
  public String issue(String jobId, String repo, Duration ttl) {
    return issueToken(jobId, repo, ttl).token();
  }

  /** A token as issued, with the claims the gateway records about it (never the token itself). */
  public record Issued(String token, String tokenId, Instant expiresAt) {
  }

  /** Like {@link #issue}, also returning the token's id and expiry, so the caller need not verify it to read them. */
  public Issued issueToken(String jobId, String repo, Duration ttl) {
    if (ttl.isNegative() || ttl.isZero() || ttl.compareTo(JobTokenVerifier.MAX_LIFETIME) > 0) {
      throw new IllegalArgumentException("job token lifetime must be between 1 second and "
          + JobTokenVerifier.MAX_LIFETIME.toMinutes() + " minutes");
    }
    RefScope scope = RefScope.forJob(jobId);
    long now = clock.instant().getEpochSecond();
    String tokenId = newTokenId();
    long expires = now + ttl.toSeconds();
    JsonObject claims = new JsonObject()
        .put("sub", jobId)
        .put("jti", tokenId)
        .put("iat", now)
        .put("nbf", now)
        .put("exp", expires)
        .put("scope", new JsonObject().put("repo", repo).put("refs", scope.glob()))
        .put("cap", new JsonArray().add(JobTokenClaims.PUSH_AGENT_REF));
    String token = signer.generateToken(claims, new JWTOptions()
        .setAlgorithm(JobTokenVerifier.ALGORITHM)
        .setIssuer(JobTokenVerifier.ISSUER)
        .setAudience(List.of(JobTokenVerifier.AUDIENCE))
        .setHeader(new JsonObject().put("kid", key.keyId()))
        .setNoTimestamp(true));
    return new Issued(token, tokenId, Instant.ofEpochSecond(expires));
  }

  /**
   * Issues a short probe token and verifies it, so a signing key that its own verification key does not match
   * fails the gateway's start rather than every job's first push. CPU only (one signature, one verification).
   */
  public void checkSigningKey() {
    try {
      verifier.verify(issue("key-check", "key-check", Duration.ofMinutes(1)));
    } catch (InvalidJobTokenException e) {
      throw new IllegalStateException("a job token signed with key " + key.keyId() + " does not verify: "
          + e.getMessage(), e);
    }
  }

  public JobTokenClaims verify(String token) throws InvalidJobTokenException {
    return verifier.verify(token);
  }

  /** Revokes a token by id until {@code expiresAt}, persisting the list. Blocking. */
  public void revoke(String tokenId, Instant expiresAt) throws IOException {
    revocations.revoke(tokenId, expiresAt);
  }

  public boolean isRevoked(String tokenId) {
    return revocations.isRevoked(tokenId);
  }

  private static String newTokenId() {
    byte[] bytes = new byte[16];
    RANDOM.nextBytes(bytes);
    return Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
  }
}
