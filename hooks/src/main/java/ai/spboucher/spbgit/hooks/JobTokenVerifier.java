package ai.spboucher.spbgit.hooks;

import static ai.spboucher.spbgit.common.Jose.text;

import ai.spboucher.spbgit.common.Jose;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import java.nio.charset.CharacterCodingException;
import java.security.PublicKey;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Predicate;

/**
 * Verifies job tokens: compact JWS, ES256 only, signed by one of the gateway's keys (looked up by
 * {@code kid}), issued by {@link #ISSUER} for {@link #AUDIENCE}, currently valid, at most {@link
 * #MAX_LIFETIME} long, not revoked, and carrying a consistent job scope.
 *
 * <p>Deliberately written against the JCA rather than a general JWT library: the algorithm is
 * pinned before the header is trusted for anything else, so {@code alg: none} and
 * HMAC-with-the-public-key forgeries have no code path to succeed through.
 *
 * <p>Each push reaches the gateway as two authenticated requests carrying the same token, so an
 * instance remembers up to {@link #REMEMBERED_SIGNATURES} tokens whose signature it verified and
 * does not redo the elliptic-curve computation for exactly the same string under the same keys.
 * Every other check, the header, the {@code kid}, the times, the revocation list and the scope,
 * runs on every call. Instances are thread-safe.
 */
public final class JobTokenVerifier {

  /** The {@code iss} every job token carries. */
  public static final String ISSUER = "spb-git-gateway";

  /** The {@code aud} every job token carries. */
  public static final String AUDIENCE = "spb-git-push";

  /**
   * The longest a token may live, {@code exp - iat}; longer claims are refused even if correctly
   * signed.
   */
  public static final Duration MAX_LIFETIME = Duration.ofHours(2);

  /**
   * How far ahead of this clock a token's {@code iat} may be, for clocks of other nodes that run
   * fast.
   */
  public static final Duration MAX_CLOCK_SKEW = Duration.ofMinutes(5);

  /** The only accepted JWS algorithm. */
  public static final String ALGORITHM = Jose.ES256_ALGORITHM;

  /** Enough for every job pushing at once; only tokens with a valid signature ever enter. */
  public static final int REMEMBERED_SIGNATURES = 256;

  private static final int MAX_TOKEN_LENGTH = 8192;

  private final Map<String, PublicKey> keysById;
  private final Predicate<String> isRevoked;
  private final Clock clock;
  private final Set<String> verifiedSignatures = ConcurrentHashMap.newKeySet();

  /**
   * @param keysById the gateway's public keys by {@code kid}; several during a key rotation
   * @param isRevoked answers whether a token id ({@code jti}) was revoked; consulted on every
   *     verification
   * @param clock the time source for {@code exp}/{@code nbf}
   */
  public JobTokenVerifier(
      Map<String, PublicKey> keysById, Predicate<String> isRevoked, Clock clock) {
    this.keysById = Map.copyOf(keysById);
    this.isRevoked = isRevoked;
    this.clock = clock;
  }

  /**
   * Whether {@code credential} has the shape of a JWT (three dot-separated parts), so it is not a
   * PAT.
   */
  public static boolean looksLikeJwt(String credential) {
    if (credential == null || !credential.startsWith("eyJ")) {
      return false;
    }
    int first = credential.indexOf('.');
    int second = first < 0 ? -1 : credential.indexOf('.', first + 1);
    return second > 0 && credential.indexOf('.', second + 1) < 0;
  }

  /** Verifies {@code token} and returns its claims, or throws with the reason it was refused. */
  public JobTokenClaims verify(String token) throws InvalidJobTokenException {
    if (token == null || token.isEmpty()) {
      throw new InvalidJobTokenException("no job token");
    }
    if (token.length() > MAX_TOKEN_LENGTH) {
      throw new InvalidJobTokenException("job token too long");
    }
    String[] parts = token.split("\\.", -1);
    if (parts.length != 3) {
      throw new InvalidJobTokenException("job token is not a signed JWT");
    }
    JsonNode header = decodeJson(parts[0], "header");
    if (!ALGORITHM.equals(text(header, "alg"))) {
      throw new InvalidJobTokenException("job token algorithm must be " + ALGORITHM);
    }
    if (header.has("crit")) {
      throw new InvalidJobTokenException("job token has unsupported critical header parameters");
    }
    String kid = text(header, "kid");
    // Immutable maps throw on a null key, so a token without a kid must not reach get().
    PublicKey key = kid == null ? null : keysById.get(kid);
    if (key == null) {
      throw new InvalidJobTokenException("job token signed with an unknown key");
    }
    // The key map never changes, so a signature that verified for this exact token still does.
    if (!verifiedSignatures.contains(token)) {
      verifySignature(key, parts);
      if (verifiedSignatures.size() >= REMEMBERED_SIGNATURES) {
        verifiedSignatures.clear();
      }
      verifiedSignatures.add(token);
    }
    return claimsFrom(decodeJson(parts[1], "payload"));
  }

  private static void verifySignature(PublicKey key, String[] parts)
      throws InvalidJobTokenException {
    if (!Jose.verifies(key, parts[0] + "." + parts[1], decode(parts[2], "signature"))) {
      throw new InvalidJobTokenException("job token signature is invalid");
    }
  }

  private JobTokenClaims claimsFrom(JsonNode payload) throws InvalidJobTokenException {
    if (!ISSUER.equals(text(payload, "iss"))) {
      throw new InvalidJobTokenException("job token has the wrong issuer");
    }
    if (!audienceMatches(payload.get("aud"))) {
      throw new InvalidJobTokenException("job token has the wrong audience");
    }
    Instant now = clock.instant();
    Instant issuedAt = requiredTime(payload, "iat");
    Instant notBefore = requiredTime(payload, "nbf");
    Instant expiresAt = requiredTime(payload, "exp");
    if (!expiresAt.isAfter(now)) {
      throw new InvalidJobTokenException("job token has expired");
    }
    if (notBefore.isAfter(now)) {
      throw new InvalidJobTokenException("job token is not valid yet");
    }
    if (issuedAt.isAfter(now.plus(MAX_CLOCK_SKEW))) {
      // Otherwise a future iat would stretch the two-hour limit, which is measured from iat.
      throw new InvalidJobTokenException("job token was issued in the future");
    }
    if (Duration.between(issuedAt, expiresAt).compareTo(MAX_LIFETIME) > 0
        || expiresAt.isBefore(issuedAt)) {
      throw new InvalidJobTokenException(
          "job token lifetime exceeds " + MAX_LIFETIME.toMinutes() + " minutes");
    }
    String tokenId = requiredText(payload, "jti");
    if (isRevoked.test(tokenId)) {
      throw new InvalidJobTokenException("job token has been revoked");
    }
    String jobId = requiredText(payload, "sub");
    RefScope scope;
    try {
      scope = RefScope.forJob(jobId);
    } catch (IllegalArgumentException e) {
      throw new InvalidJobTokenException("job token names an invalid job id");
    }
    JsonNode scopeNode = payload.get("scope");
    if (scopeNode == null || !scopeNode.isObject()) {
      throw new InvalidJobTokenException("job token has no scope");
    }
    String repo = requiredText(scopeNode, "repo");
    if (!scope.glob().equals(text(scopeNode, "refs"))) {
      throw new InvalidJobTokenException("job token ref scope must be " + scope.glob());
    }
    List<String> capabilities = stringList(payload.get("cap"));
    if (!capabilities.contains(JobTokenClaims.PUSH_AGENT_REF)) {
      throw new InvalidJobTokenException(
          "job token lacks the " + JobTokenClaims.PUSH_AGENT_REF + " capability");
    }
    return new JobTokenClaims(
        jobId, tokenId, repo, scope, capabilities, issuedAt, notBefore, expiresAt);
  }

  private static boolean audienceMatches(JsonNode aud) {
    if (aud == null) {
      return false;
    }
    if (aud.isTextual()) {
      return AUDIENCE.equals(aud.textValue());
    }
    if (aud.isArray()) {
      for (JsonNode entry : aud) {
        if (entry.isTextual() && AUDIENCE.equals(entry.textValue())) {
          return true;
        }
      }
    }
    return false;
  }

  private static List<String> stringList(JsonNode node) {
    List<String> values = new ArrayList<>();
    if (node != null && node.isArray()) {
      node.forEach(
          entry -> {
            if (entry.isTextual()) {
              values.add(entry.textValue());
            }
          });
    }
    return values;
  }

  private static Instant requiredTime(JsonNode node, String field) throws InvalidJobTokenException {
    JsonNode value = node.get(field);
    if (value == null
        || !value.canConvertToLong()
        || !value.isIntegralNumber()
        || value.longValue() < Instant.MIN.getEpochSecond()
        || value.longValue() > Instant.MAX.getEpochSecond()) {
      throw new InvalidJobTokenException("job token has no valid '" + field + "' claim");
    }
    return Instant.ofEpochSecond(value.longValue());
  }

  private static String requiredText(JsonNode node, String field) throws InvalidJobTokenException {
    String value = text(node, field);
    if (value == null || value.isEmpty()) {
      throw new InvalidJobTokenException("job token has no '" + field + "' claim");
    }
    return value;
  }

  private static JsonNode decodeJson(String part, String what) throws InvalidJobTokenException {
    try {
      JsonNode node = Jose.jsonObject(decode(part, what));
      if (node == null) {
        throw new InvalidJobTokenException("job token " + what + " is not a JSON object");
      }
      return node;
    } catch (CharacterCodingException e) {
      throw new InvalidJobTokenException("job token " + what + " is not UTF-8");
    } catch (JsonProcessingException e) {
      throw new InvalidJobTokenException("job token " + what + " is not valid JSON");
    }
  }

  private static byte[] decode(String part, String what) throws InvalidJobTokenException {
    return Jose.decodeBase64url(
        part, why -> new InvalidJobTokenException("job token " + what + " is " + why));
  }
}
