package ai.spboucher.spbgit.hooks;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.Arrays;
import java.util.Base64;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class JobTokenVerifierTest {

  private static final Instant NOW = Instant.parse("2030-01-01T12:00:00Z");
  private static final String JOB = "abc";
  private static final String REPO = "demo";
  private static final String REVOKED_JTI = "revoked-token-id";

  private final TestTokens tokens = new TestTokens(TestTokens.newKeyPair());
  private final JobTokenVerifier verifier =
      new JobTokenVerifier(
          Map.of(PublicKeys.keyId(tokens.publicKey()), tokens.publicKey()),
          Set.of(REVOKED_JTI)::contains,
          Clock.fixed(NOW, ZoneOffset.UTC));

  private static ObjectNode validClaims() {
    return TestTokens.claims(JOB, REPO, NOW.minusSeconds(60), Duration.ofHours(1));
  }

  private String signed(ObjectNode claims) {
    return tokens.sign(tokens.header(), claims);
  }

  private void assertRefused(String token, String reason) {
    InvalidJobTokenException e =
        assertThrows(InvalidJobTokenException.class, () -> verifier.verify(token));
    assertTrue(
        e.getMessage().contains(reason),
        () -> "expected a refusal naming '" + reason + "', got: " + e.getMessage());
  }

  @Test
  void verifiesValidTokenAndReturnsItsClaims() throws Exception {
    ObjectNode claims = validClaims();
    JobTokenClaims verified = verifier.verify(signed(claims));

    assertEquals(JOB, verified.jobId());
    assertEquals(claims.get("jti").textValue(), verified.tokenId());
    assertEquals(REPO, verified.repo());
    assertEquals(RefScope.forJob(JOB), verified.refScope());
    assertEquals(List.of(JobTokenClaims.PUSH_AGENT_REF), verified.capabilities());
    assertEquals(NOW.minusSeconds(60), verified.issuedAt());
    assertEquals(NOW.minusSeconds(60), verified.notBefore());
    assertEquals(NOW.minusSeconds(60).plus(Duration.ofHours(1)), verified.expiresAt());
  }

  @Test
  void acceptsAudienceAsArrayContainingThePushAudience() throws Exception {
    ObjectNode claims = validClaims();
    claims.putArray("aud").add("something-else").add(JobTokenVerifier.AUDIENCE);

    assertEquals(JOB, verifier.verify(signed(claims)).jobId());
  }

  @Test
  void acceptsLifetimeOfExactlyTwoHours() throws Exception {
    ObjectNode claims =
        TestTokens.claims(JOB, REPO, NOW.minusSeconds(1), JobTokenVerifier.MAX_LIFETIME);

    assertEquals(JOB, verifier.verify(signed(claims)).jobId());
  }

  @Test
  void refusesExpiredToken() {
    assertRefused(
        tokens.mint(JOB, REPO, NOW.minus(Duration.ofMinutes(90)), Duration.ofHours(1)), "expired");
  }

  @Test
  void refusesTokenExpiringExactlyNow() {
    assertRefused(
        tokens.mint(JOB, REPO, NOW.minus(Duration.ofHours(1)), Duration.ofHours(1)), "expired");
  }

  @Test
  void refusesRevokedToken() {
    ObjectNode claims = validClaims().put("jti", REVOKED_JTI);

    assertRefused(signed(claims), "revoked");
  }

  @Test
  void refusesTamperedPayload() {
    String token = signed(validClaims());
    String[] parts = token.split("\\.");
    ObjectNode payload = TestTokens.payloadOf(token);
    scope(payload).put("repo", "other-repo");

    assertRefused(
        parts[0] + "." + TestTokens.encode(payload) + "." + parts[2], "signature is invalid");
  }

  @Test
  void refusesTamperedSignature() {
    String token = signed(validClaims());
    String[] parts = token.split("\\.");
    byte[] signature = Base64.getUrlDecoder().decode(parts[2]);
    signature[10] ^= 0x01;

    assertRefused(
        parts[0] + "." + parts[1] + "." + TestTokens.base64url(signature), "signature is invalid");
  }

  @Test
  void refusesTruncatedSignature() {
    String token = signed(validClaims());

    String[] parts = token.split("\\.");
    byte[] signature = Base64.getUrlDecoder().decode(parts[2]);

    assertRefused(
        parts[0] + "." + parts[1] + "." + TestTokens.base64url(Arrays.copyOf(signature, 63)),
        "signature is invalid");
    assertRefused(token.substring(0, token.length() - 4), "signature");
  }

  @Test
  void refusesEmptySignature() {
    String token = signed(validClaims());

    assertRefused(token.substring(0, token.lastIndexOf('.') + 1), "signature is invalid");
  }

  @Test
  void refusesAllZeroSignature() {
    // r = s = 0 verified as valid on some JDKs (CVE-2022-21449): it must be refused.
    String token = signed(validClaims());

    assertRefused(
        token.substring(0, token.lastIndexOf('.') + 1) + TestTokens.base64url(new byte[64]),
        "signature is invalid");
  }

  @Test
  void verifiesAValidTokenRightAfterRefusingBrokenSignatures() throws Exception {
    // The JCA object is reused per thread: a refusal, even one the JCA throws for, must leave
    // nothing behind.
    String token = signed(validClaims());
    String unsigned = token.substring(0, token.lastIndexOf('.') + 1);
    assertRefused(unsigned + TestTokens.base64url(new byte[64]), "signature is invalid");
    byte[] ones = new byte[64];
    Arrays.fill(ones, (byte) 0xff);
    assertRefused(unsigned + TestTokens.base64url(ones), "signature is invalid");

    assertEquals(JOB, verifier.verify(token).jobId());
    assertEquals(JOB, verifier.verify(token).jobId());
  }

  @Test
  void rechecksRevocationAndExpiryOfATokenWhoseSignatureItRemembers() throws Exception {
    Set<String> revoked = new HashSet<>();
    Instant[] now = {NOW};
    JobTokenVerifier remembering =
        new JobTokenVerifier(
            Map.of(PublicKeys.keyId(tokens.publicKey()), tokens.publicKey()),
            revoked::contains,
            new Clock() {
              @Override
              public ZoneId getZone() {
                return ZoneOffset.UTC;
              }

              @Override
              public Clock withZone(ZoneId zone) {
                return this;
              }

              @Override
              public Instant instant() {
                return now[0];
              }
            });
    ObjectNode claims = validClaims();
    String token = signed(claims);
    assertEquals(JOB, remembering.verify(token).jobId());

    revoked.add(claims.get("jti").textValue());
    assertThrows(
        InvalidJobTokenException.class, () -> remembering.verify(token), "revoked after first use");
    revoked.clear();
    assertEquals(JOB, remembering.verify(token).jobId());
    now[0] = NOW.plus(Duration.ofHours(2));
    InvalidJobTokenException expired =
        assertThrows(InvalidJobTokenException.class, () -> remembering.verify(token));
    assertTrue(expired.getMessage().contains("expired"), expired.getMessage());
  }

  @Test
  void aRememberedSignatureCoversOnlyThatExactToken() throws Exception {
    String token = signed(validClaims());
    assertEquals(JOB, verifier.verify(token).jobId());
    String[] parts = token.split("\\.");
    byte[] signature = Base64.getUrlDecoder().decode(parts[2]);
    signature[63] ^= 0x01;

    assertRefused(
        parts[0] + "." + parts[1] + "." + TestTokens.base64url(signature), "signature is invalid");
    ObjectNode otherClaims = validClaims();
    assertRefused(
        TestTokens.encode(tokens.header()) + "." + TestTokens.encode(otherClaims) + "." + parts[2],
        "signature is invalid");
  }

  @Test
  void verifiesCorrectlyPastTheNumberOfRememberedSignatures() throws Exception {
    String first = signed(validClaims());
    assertEquals(JOB, verifier.verify(first).jobId());
    for (int i = 0; i < JobTokenVerifier.REMEMBERED_SIGNATURES + 1; i++) {
      assertEquals(JOB, verifier.verify(signed(validClaims())).jobId());
    }

    assertEquals(JOB, verifier.verify(first).jobId());
  }

  @Test
  void refusesSignatureByAnotherKeyUnderTheTrustedKid() {
    TestTokens attacker = new TestTokens(TestTokens.newKeyPair());

    assertRefused(attacker.sign(tokens.header(), validClaims()), "signature is invalid");
  }

  @Test
  void refusesAlgNoneWithEmptySignature() {
    ObjectNode header = tokens.header().put("alg", "none");

    assertRefused(
        TestTokens.encode(header) + "." + TestTokens.encode(validClaims()) + ".",
        "algorithm must be ES256");
  }

  @ParameterizedTest
  @ValueSource(strings = {"None", "NONE", "es256", "ES384", ""})
  void refusesAnyAlgorithmButExactlyEs256(String alg) {
    assertRefused(
        tokens.sign(tokens.header().put("alg", alg), validClaims()), "algorithm must be ES256");
  }

  @Test
  void refusesMissingAlgorithm() {
    ObjectNode header = tokens.header();
    header.remove("alg");

    assertRefused(tokens.sign(header, validClaims()), "algorithm must be ES256");
  }

  @Test
  void refusesHs256SignedWithThePublicKeyAsHmacSecret() throws GeneralSecurityException {
    // The classic key-confusion forgery: whoever has the public key can compute this "signature".
    for (byte[] secret :
        List.of(
            PublicKeys.toPem(tokens.publicKey()).getBytes(StandardCharsets.US_ASCII),
            tokens.publicKey().getEncoded())) {
      String signingInput =
          TestTokens.encode(tokens.header().put("alg", "HS256"))
              + "."
              + TestTokens.encode(validClaims());
      assertRefused(
          signingInput + "." + TestTokens.base64url(hmacSha256(secret, signingInput)),
          "algorithm must be ES256");
    }
  }

  @Test
  void refusesHmacSignatureUnderAnEs256Header() throws GeneralSecurityException {
    String signingInput =
        TestTokens.encode(tokens.header()) + "." + TestTokens.encode(validClaims());
    byte[] secret = tokens.publicKey().getEncoded();

    assertRefused(
        signingInput + "." + TestTokens.base64url(hmacSha256(secret, signingInput)),
        "signature is invalid");
  }

  @Test
  void refusesUnknownKid() {
    ObjectNode header =
        tokens.header().put("kid", PublicKeys.keyId(TestTokens.newKeyPair().getPublic()));

    assertRefused(tokens.sign(header, validClaims()), "unknown key");
  }

  @Test
  void refusesMissingKid() {
    ObjectNode header = tokens.header();
    header.remove("kid");

    assertRefused(tokens.sign(header, validClaims()), "unknown key");
  }

  @Test
  void refusesCriticalHeaderParameters() {
    ObjectNode header = tokens.header();
    header.putArray("crit").add("exp");

    assertRefused(tokens.sign(header, validClaims()), "critical header");
  }

  @Test
  void refusesWrongAudience() {
    assertRefused(signed(validClaims().put("aud", "spb-git-api")), "wrong audience");
  }

  @Test
  void refusesAudienceArrayWithoutThePushAudience() {
    ObjectNode claims = validClaims();
    claims.putArray("aud").add("spb-git-api");

    assertRefused(signed(claims), "wrong audience");
  }

  @Test
  void refusesMissingAudience() {
    ObjectNode claims = validClaims();
    claims.remove("aud");

    assertRefused(signed(claims), "wrong audience");
  }

  @Test
  void refusesWrongIssuer() {
    assertRefused(signed(validClaims().put("iss", "someone-else")), "wrong issuer");
  }

  @Test
  void refusesMissingIssuer() {
    ObjectNode claims = validClaims();
    claims.remove("iss");

    assertRefused(signed(claims), "wrong issuer");
  }

  @ParameterizedTest
  @ValueSource(strings = {"exp", "nbf", "iat"})
  void refusesMissingTimeClaim(String claim) {
    ObjectNode claims = validClaims();
    claims.remove(claim);

    assertRefused(signed(claims), "no valid '" + claim + "' claim");
  }

  @ParameterizedTest
  @ValueSource(strings = {"exp", "nbf", "iat"})
  void refusesNonIntegerTimeClaim(String claim) {
    ObjectNode textual = validClaims();
    textual.put(claim, String.valueOf(textual.get(claim).longValue()));
    ObjectNode fractional = validClaims();
    fractional.put(claim, fractional.get(claim).longValue() + 0.5);

    assertRefused(signed(textual), "no valid '" + claim + "' claim");
    assertRefused(signed(fractional), "no valid '" + claim + "' claim");
  }

  @Test
  void refusesTimeClaimOutsideTheRepresentableRange() {
    assertRefused(signed(validClaims().put("exp", Long.MAX_VALUE)), "no valid 'exp' claim");
  }

  @Test
  void refusesLifetimeLongerThanTwoHours() {
    ObjectNode claims =
        TestTokens.claims(
            JOB, REPO, NOW.minusSeconds(60), JobTokenVerifier.MAX_LIFETIME.plusSeconds(1));

    assertRefused(signed(claims), "lifetime exceeds 120 minutes");
  }

  @Test
  void refusesExpiryBeforeIssue() {
    ObjectNode claims = validClaims();
    claims.put("iat", NOW.plus(Duration.ofMinutes(4)).getEpochSecond());
    claims.put("exp", NOW.plus(Duration.ofMinutes(3)).getEpochSecond());

    assertRefused(signed(claims), "lifetime exceeds 120 minutes");
  }

  @Test
  void refusesIssueTimeInTheFutureThatWouldStretchTheLifetime() {
    ObjectNode claims = validClaims();
    claims.put("iat", NOW.plus(Duration.ofHours(1)).getEpochSecond());
    claims.put("exp", NOW.plus(Duration.ofHours(3)).getEpochSecond());

    assertRefused(signed(claims), "issued in the future");
  }

  @Test
  void refusesNotBeforeInTheFuture() {
    ObjectNode claims = validClaims().put("nbf", NOW.plusSeconds(1).getEpochSecond());

    assertRefused(signed(claims), "not valid yet");
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "refs/agents/other/*",
        "refs/heads/*",
        "refs/*",
        "refs/agents/abc/",
        "refs/agents/abc/**",
        "refs/agents/*",
        "*"
      })
  void refusesRefScopeThatIsNotTheSubjectsNamespace(String refs) {
    ObjectNode claims = validClaims();
    scope(claims).put("refs", refs);

    assertRefused(signed(claims), "ref scope must be refs/agents/abc/*");
  }

  @Test
  void refusesMissingScope() {
    ObjectNode claims = validClaims();
    claims.remove("scope");

    assertRefused(signed(claims), "no scope");
  }

  @Test
  void refusesScopeWithoutRepo() {
    ObjectNode claims = validClaims();
    scope(claims).remove("repo");

    assertRefused(signed(claims), "no 'repo' claim");
  }

  @Test
  void refusesMissingCapability() {
    ObjectNode claims = validClaims();
    claims.remove("cap");

    assertRefused(signed(claims), "lacks the push:agent-ref capability");
  }

  @Test
  void refusesCapabilitiesWithoutPushAgentRef() {
    ObjectNode claims = validClaims();
    claims.putArray("cap").add("push:any-ref");

    assertRefused(signed(claims), "lacks the push:agent-ref capability");
  }

  @Test
  void refusesCapabilityAsPlainString() {
    assertRefused(
        signed(validClaims().put("cap", JobTokenClaims.PUSH_AGENT_REF)),
        "lacks the push:agent-ref capability");
  }

  @ParameterizedTest
  @ValueSource(strings = {"../x", "A B", "ABC", "abc/def", "-abc", "a..b", "abc\n", "*"})
  void refusesInvalidJobIdInSubject(String sub) {
    ObjectNode claims = validClaims().put("sub", sub);
    scope(claims).put("refs", "refs/agents/" + sub + "/*");

    assertRefused(signed(claims), "invalid job id");
  }

  @Test
  void refusesMissingSubject() {
    ObjectNode claims = validClaims();
    claims.remove("sub");

    assertRefused(signed(claims), "no 'sub' claim");
  }

  @Test
  void refusesMissingTokenId() {
    ObjectNode claims = validClaims();
    claims.remove("jti");

    assertRefused(signed(claims), "no 'jti' claim");
  }

  @Test
  void refusesTokenWithTwoPartsOnly() {
    String token = signed(validClaims());

    assertRefused(token.substring(0, token.lastIndexOf('.')), "not a signed JWT");
  }

  @Test
  void refusesTokenWithFourParts() {
    assertRefused(signed(validClaims()) + ".extra", "not a signed JWT");
  }

  @Test
  void refusesGarbageBase64() {
    String token = signed(validClaims());

    assertRefused("!!!." + token.substring(token.indexOf('.') + 1), "header is not base64url");
    String garbagePayload = TestTokens.encode(tokens.header()) + ".$$$";
    assertRefused(
        garbagePayload + "." + TestTokens.base64url(tokens.es256(garbagePayload)),
        "payload is not base64url");
    assertRefused(
        token.substring(0, token.lastIndexOf('.') + 1) + "a+b/c=", "signature is not base64url");
  }

  @Test
  void refusesNonJsonHeader() {
    assertRefused(
        TestTokens.base64url("not json") + "." + TestTokens.encode(validClaims()) + ".AAAA",
        "header is not valid JSON");
  }

  @ParameterizedTest
  @ValueSource(strings = {"[]", "\"eyJ\"", "42", "null", ""})
  void refusesNonObjectJsonHeader(String json) {
    assertRefused(
        TestTokens.base64url(json) + "." + TestTokens.encode(validClaims()) + ".AAAA",
        "header is not a JSON object");
  }

  @ParameterizedTest
  @ValueSource(strings = {"[]", "\"claims\"", "42", "null"})
  void refusesNonObjectJsonPayload(String json) {
    String signingInput = TestTokens.encode(tokens.header()) + "." + TestTokens.base64url(json);

    assertRefused(
        signingInput + "." + TestTokens.base64url(tokens.es256(signingInput)),
        "payload is not a JSON object");
  }

  /**
   * Found by JobTokenVerifierFuzzTest: "==" after the signature decoded to the same bytes and
   * verified.
   */
  @Test
  void refusesPaddedSignature() {
    assertRefused(signed(validClaims()) + "==", "signature is not canonical base64url");
  }

  /** Found by JobTokenVerifierFuzzTest: unused low bits in the last character were ignored. */
  @Test
  void refusesSignatureWithStrayLowBits() {
    String token = signed(validClaims());
    char last = token.charAt(token.length() - 1);
    String alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    // 64 bytes are 86 characters; the last one carries 2 bits of the signature and 4 unused bits.
    String stray =
        token.substring(0, token.length() - 1) + alphabet.charAt(alphabet.indexOf(last) | 0x01);

    assertRefused(stray, "signature is not canonical base64url");
  }

  @Test
  void refusesPaddedHeaderEvenWhenThePaddedTextIsSigned() {
    String header = TestTokens.encode(tokens.header());
    String padded =
        header + "=".repeat((4 - header.length() % 4) % 4 == 0 ? 4 : (4 - header.length() % 4) % 4);

    assertRefused(signedRaw(padded, TestTokens.encode(validClaims())), "header is not");
  }

  @Test
  void refusesDuplicateHeaderMembers() {
    String header = tokens.header().toString();
    String duplicated = "{\"alg\":\"none\"," + header.substring(1);

    assertRefused(
        signedRaw(TestTokens.base64url(duplicated), TestTokens.encode(validClaims())),
        "header is not valid JSON");
  }

  /**
   * Found by JobTokenVerifierFuzzTest: with duplicates the last member won, so two parsers could
   * disagree.
   */
  @Test
  void refusesDuplicateClaims() {
    String claims = validClaims().toString();
    String duplicated = claims.substring(0, claims.length() - 1) + ",\"sub\":\"other\"}";

    assertRefused(
        signedRaw(TestTokens.encode(tokens.header()), TestTokens.base64url(duplicated)),
        "payload is not valid JSON");
  }

  /** Found by JobTokenVerifierFuzzTest: anything after the first JSON value was ignored. */
  @ParameterizedTest
  @ValueSource(strings = {"{}", " x", "[]", "\"tail\""})
  void refusesContentAfterTheJsonObject(String tail) {
    String header = TestTokens.encode(tokens.header());

    assertRefused(
        signedRaw(
            TestTokens.base64url(tokens.header().toString() + tail),
            TestTokens.encode(validClaims())),
        "header is not valid JSON");
    assertRefused(
        signedRaw(header, TestTokens.base64url(validClaims().toString() + tail)),
        "payload is not valid JSON");
  }

  @Test
  void refusesJsonThatIsNotUtf8() {
    byte[] utf16 = validClaims().toString().getBytes(StandardCharsets.UTF_16);
    byte[] latin1 =
        validClaims().put("repo-note", "\u00e9").toString().getBytes(StandardCharsets.ISO_8859_1);

    assertRefused(
        signedRaw(TestTokens.encode(tokens.header()), TestTokens.base64url(utf16)),
        "payload is not");
    assertRefused(
        signedRaw(TestTokens.encode(tokens.header()), TestTokens.base64url(latin1)),
        "payload is not UTF-8");
  }

  /**
   * A token whose header and payload segments are taken as given and signed with the trusted key.
   */
  private String signedRaw(String headerSegment, String payloadSegment) {
    String signingInput = headerSegment + "." + payloadSegment;
    return signingInput + "." + TestTokens.base64url(tokens.es256(signingInput));
  }

  @Test
  void refusesOversizedToken() {
    ObjectNode claims = validClaims().put("padding", "x".repeat(10_000));

    assertRefused(signed(claims), "too long");
  }

  @Test
  void refusesEmptyAndMissingToken() {
    assertRefused("", "no job token");
    assertRefused(null, "no job token");
  }

  @Test
  void refusalNeverEchoesTheToken() {
    ObjectNode claims = validClaims().put("iss", "someone-else");
    String token = signed(claims);

    InvalidJobTokenException e =
        assertThrows(InvalidJobTokenException.class, () -> verifier.verify(token));
    assertFalse(e.getMessage().contains(claims.get("jti").textValue()));
    assertFalse(e.getMessage().contains(token.split("\\.")[1]));
  }

  @Test
  void acceptsTokenSignedByAnyConfiguredKeyDuringRotation() throws Exception {
    TestTokens next = new TestTokens(TestTokens.newKeyPair());
    JobTokenVerifier rotating =
        new JobTokenVerifier(
            Map.of(
                PublicKeys.keyId(tokens.publicKey()), tokens.publicKey(),
                PublicKeys.keyId(next.publicKey()), next.publicKey()),
            jti -> false,
            Clock.fixed(NOW, ZoneOffset.UTC));

    assertEquals(JOB, rotating.verify(tokens.mint(JOB, REPO, NOW, Duration.ofMinutes(5))).jobId());
    assertEquals(JOB, rotating.verify(next.mint(JOB, REPO, NOW, Duration.ofMinutes(5))).jobId());
  }

  @Test
  void recognisesJwtShapedCredentials() {
    assertTrue(JobTokenVerifier.looksLikeJwt(signed(validClaims())));
    assertFalse(JobTokenVerifier.looksLikeJwt("spb_pat_0123456789"));
    assertFalse(JobTokenVerifier.looksLikeJwt("eyJhbGciOiJFUzI1NiJ9.payload"));
    assertFalse(JobTokenVerifier.looksLikeJwt(null));
  }

  private static ObjectNode scope(ObjectNode claims) {
    return (ObjectNode) claims.get("scope");
  }

  private static byte[] hmacSha256(byte[] secret, String signingInput)
      throws GeneralSecurityException {
    Mac mac = Mac.getInstance("HmacSHA256");
    mac.init(new SecretKeySpec(secret, "HmacSHA256"));
    return mac.doFinal(signingInput.getBytes(StandardCharsets.US_ASCII));
  }
}
