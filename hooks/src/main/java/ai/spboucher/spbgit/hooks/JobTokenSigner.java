package ai.spboucher.spbgit.hooks;

import ai.spboucher.spbgit.common.Jose;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.security.GeneralSecurityException;
import java.security.PrivateKey;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;

/**
 * Signs job tokens: compact JWS with ES256 over the claims {@link JobTokenVerifier} requires, so
 * the one pair of classes holds the whole token format. Written against the JCA like the verifier;
 * no JWT library is involved on either side.
 *
 * <p>Threading: instances are thread-safe; {@link #sign} is CPU only (one elliptic-curve signature,
 * about a tenth of a millisecond), cheap enough for the event loop.
 */
public final class JobTokenSigner {

  /** A token as issued, with the claims the gateway records about it (never the token itself). */
  public record Issued(String token, String tokenId, Instant expiresAt) {}

  private static final SecureRandom RANDOM = new SecureRandom();

  private final String keyId;
  private final PrivateKey key;
  private final Clock clock;

  /**
   * @param keyId the {@code kid} the verifier looks the public key up by
   */
  public JobTokenSigner(String keyId, PrivateKey key, Clock clock) {
    this.keyId = keyId;
    this.key = key;
    this.clock = clock;
  }

  /**
   * A token for {@code jobId} on {@code repo}, valid from now for {@code ttl}.
   *
   * @throws IllegalArgumentException for a lifetime outside 1 s to {@link
   *     JobTokenVerifier#MAX_LIFETIME}, or a job id that is not ref-safe
   */
  public Issued sign(String jobId, String repo, Duration ttl) {
    if (ttl.isNegative() || ttl.isZero() || ttl.compareTo(JobTokenVerifier.MAX_LIFETIME) > 0) {
      throw new IllegalArgumentException(
          "job token lifetime must be between 1 second and "
              + JobTokenVerifier.MAX_LIFETIME.toMinutes()
              + " minutes");
    }
    RefScope scope = RefScope.forJob(jobId);
    long now = clock.instant().getEpochSecond();
    long expires = now + ttl.toSeconds();
    String tokenId = newTokenId();
    ObjectNode header =
        Jose.JSON
            .createObjectNode()
            .put("alg", JobTokenVerifier.ALGORITHM)
            .put("typ", "JWT")
            .put("kid", keyId);
    ObjectNode claims =
        Jose.JSON
            .createObjectNode()
            .put("iss", JobTokenVerifier.ISSUER)
            .put("aud", JobTokenVerifier.AUDIENCE)
            .put("sub", jobId)
            .put("jti", tokenId)
            .put("iat", now)
            .put("nbf", now)
            .put("exp", expires);
    claims.putObject("scope").put("repo", repo).put("refs", scope.glob());
    claims.putArray("cap").add(JobTokenClaims.PUSH_AGENT_REF);
    String signingInput = Jose.base64url(header) + "." + Jose.base64url(claims);
    return new Issued(
        signingInput + "." + Jose.base64url(signature(signingInput)),
        tokenId,
        Instant.ofEpochSecond(expires));
  }

  private byte[] signature(String signingInput) {
    try {
      return Jose.sign(key, signingInput);
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException(
          "cannot sign a job token with key " + keyId + ": " + e.getMessage(), e);
    }
  }

  private static String newTokenId() {
    byte[] bytes = new byte[16];
    RANDOM.nextBytes(bytes);
    return Jose.base64url(bytes);
  }
}
