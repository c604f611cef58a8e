package ai.spboucher.spbgit.hooks;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.security.KeyPair;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

class JobTokenSignerTest {

  private static final Instant NOW = Instant.parse("2030-01-01T12:00:00Z");
  private static final Clock CLOCK = Clock.fixed(NOW, ZoneOffset.UTC);

  private final KeyPair keys = TestTokens.newKeyPair();
  private final String kid = PublicKeys.keyId(keys.getPublic());
  private final JobTokenSigner signer = new JobTokenSigner(kid, keys.getPrivate(), CLOCK);

  private JobTokenVerifier verifierTrusting(KeyPair pair, Set<String> revoked) {
    return new JobTokenVerifier(
        Map.of(PublicKeys.keyId(pair.getPublic()), pair.getPublic()), revoked::contains, CLOCK);
  }

  @Test
  void signsTokensTheVerifierAcceptsWithTheScopeAndTimesAskedFor() throws Exception {
    JobTokenSigner.Issued issued = signer.sign("job-7", "demo", Duration.ofMinutes(30));

    JobTokenClaims claims = verifierTrusting(keys, Set.of()).verify(issued.token());

    assertEquals("job-7", claims.jobId());
    assertEquals("demo", claims.repo());
    assertEquals("refs/agents/job-7/*", claims.refScope().glob());
    assertEquals(issued.tokenId(), claims.tokenId());
    assertEquals(NOW, claims.issuedAt());
    assertEquals(NOW, claims.notBefore());
    assertEquals(NOW.plus(Duration.ofMinutes(30)), claims.expiresAt());
    assertEquals(issued.expiresAt(), claims.expiresAt());
    ObjectNode payload = TestTokens.payloadOf(issued.token());
    assertEquals(JobTokenVerifier.ISSUER, payload.get("iss").textValue());
    assertEquals(JobTokenVerifier.AUDIENCE, payload.get("aud").textValue());
  }

  @Test
  void everyTokenHasItsOwnId() {
    assertNotEquals(
        signer.sign("j", "demo", Duration.ofMinutes(1)).tokenId(),
        signer.sign("j", "demo", Duration.ofMinutes(1)).tokenId());
  }

  @Test
  void aVerifierTrustingAnotherKeyRefusesItsTokens() {
    String token = signer.sign("j", "demo", Duration.ofMinutes(1)).token();

    assertThrows(
        InvalidJobTokenException.class,
        () -> verifierTrusting(TestTokens.newKeyPair(), Set.of()).verify(token));
  }

  @Test
  void revocationAppliesToTheIdItReturns() {
    JobTokenSigner.Issued issued = signer.sign("j", "demo", Duration.ofMinutes(1));

    InvalidJobTokenException e =
        assertThrows(
            InvalidJobTokenException.class,
            () -> verifierTrusting(keys, Set.of(issued.tokenId())).verify(issued.token()));
    assertTrue(e.getMessage().contains("revoked"), e.getMessage());
  }

  @Test
  void refusesLifetimesOutsideOneSecondToTwoHoursAndUnsafeJobIds() {
    assertThrows(IllegalArgumentException.class, () -> signer.sign("j", "demo", Duration.ZERO));
    assertThrows(
        IllegalArgumentException.class,
        () -> signer.sign("j", "demo", Duration.ofHours(2).plusSeconds(1)));
    assertThrows(
        IllegalArgumentException.class, () -> signer.sign("../x", "demo", Duration.ofMinutes(1)));
  }
}
