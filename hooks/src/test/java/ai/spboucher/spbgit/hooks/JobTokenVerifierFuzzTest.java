package ai.spboucher.spbgit.hooks;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.BigIntegerNode;
import com.fasterxml.jackson.databind.node.BooleanNode;
import com.fasterxml.jackson.databind.node.DecimalNode;
import com.fasterxml.jackson.databind.node.DoubleNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.LongNode;
import com.fasterxml.jackson.databind.node.NullNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.node.TextNode;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import org.junit.jupiter.api.Test;

/**
 * {@link JobTokenVerifier} on mutated and forged tokens. Two properties:
 *
 * <ul>
 *   <li>Mutations of valid tokens (bit flips, truncation, garbage, extra dots, whitespace,
 *       non-canonical base64url, swapped or oversized segments): only {@link
 *       InvalidJobTokenException} ever escapes, and a mutation verifies only if it is the very
 *       token it was made from.
 *   <li>Re-signed tokens (headers and claims of every type and edge value, duplicate keys,
 *       non-JSON, other keys and algorithms): the verifier accepts exactly the tokens the rules of
 *       docs/hooks.md accept, judged here by a strict model of its own, and returns the claims that
 *       were signed.
 * </ul>
 */
class JobTokenVerifierFuzzTest {

  private static final int TRIES = 2_000;

  /** Each re-signed try signs and verifies with ES256, a few milliseconds on a busy machine. */
  private static final int SIGNED_TRIES = 600;

  private static final Instant NOW = Instant.parse("2030-01-01T12:00:00Z");
  private static final long NOW_S = NOW.getEpochSecond();
  private static final String REVOKED = "revoked-token-id";
  private static final int MAX_TOKEN_LENGTH = 8192;
  private static final Base64.Encoder BASE64URL = Base64.getUrlEncoder().withoutPadding();

  /** The model's parser: strict UTF-8, no duplicate keys, nothing after the value. */
  private static final ObjectMapper STRICT_JSON =
      JsonMapper.builder()
          .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
          .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
          .build();

  private static final JsonNodeFactory NODES = JsonNodeFactory.instance;

  private final TestTokens tokens = new TestTokens(TestTokens.newKeyPair());
  private final TestTokens stranger = new TestTokens(TestTokens.newKeyPair());
  private final String kid = PublicKeys.keyId(tokens.publicKey());
  private final JobTokenVerifier verifier =
      new JobTokenVerifier(
          Map.of(kid, tokens.publicKey()),
          Set.of(REVOKED)::contains,
          Clock.fixed(NOW, ZoneOffset.UTC));

  // ---- property 1: mutations of valid tokens ----

  @Test
  void noMutationOfAValidTokenVerifies() {
    List<String> valid =
        List.of(
            tokens.mint("abc", "demo", NOW.minusSeconds(60), Duration.ofHours(1)),
            tokens.mint("j", "demo", NOW.minusSeconds(1), JobTokenVerifier.MAX_LIFETIME),
            tokens.mint(
                "job-with-a-longer-id-0123456789",
                "a-repo",
                NOW.minusSeconds(7000),
                Duration.ofHours(2)));
    for (String token : valid) {
      assertTrue(verified(token).isPresent(), "the unmutated token verifies");
    }
    Fuzz.forAll(
        "mutated job tokens",
        TRIES,
        random -> mutate(random, valid.get(random.nextInt(valid.size()))),
        Fuzz::show,
        token -> {
          if (verified(token).isPresent()) {
            assertTrue(valid.contains(token), "a mutated token verified");
          }
        });
  }

  private String mutate(Random random, String token) {
    String mutated = token;
    int count = 1 + random.nextInt(3);
    for (int i = 0; i < count; i++) {
      mutated = mutateOnce(random, mutated);
    }
    return mutated;
  }

  private String mutateOnce(Random random, String token) {
    String[] parts = token.split("\\.", -1);
    int part = random.nextInt(parts.length);
    int at = token.isEmpty() ? 0 : random.nextInt(token.length());
    switch (random.nextInt(14)) {
      case 0 -> {
        // A bit flip in the text.
        if (!token.isEmpty()) {
          char flipped = (char) (token.charAt(at) ^ (1 << random.nextInt(7)));
          return token.substring(0, at) + flipped + token.substring(at + 1);
        }
        return token;
      }
      case 1 -> {
        // A bit flip in a segment's bytes, re-encoded canonically.
        byte[] bytes = lenientDecode(parts[part]);
        if (bytes.length > 0) {
          bytes[random.nextInt(bytes.length)] ^= (byte) (1 << random.nextInt(8));
        }
        parts[part] = BASE64URL.encodeToString(bytes);
        return String.join(".", parts);
      }
      case 2 -> {
        return token.substring(0, at);
      }
      case 3 -> {
        parts[part] = randomBase64url(random, random.nextInt(300));
        return String.join(".", parts);
      }
      case 4 -> {
        return token.substring(0, at) + "." + token.substring(at);
      }
      case 5 -> {
        String space =
            List.of(" ", "\t", "\n", "\r", "\u00a0", "\u2028", "\ufeff").get(random.nextInt(7));
        return switch (random.nextInt(3)) {
          case 0 -> space + token;
          case 1 -> token + space;
          default -> token.substring(0, at) + space + token.substring(at);
        };
      }
      case 6 -> {
        parts[part] = nonCanonical(random, parts[part]);
        return String.join(".", parts);
      }
      case 7 -> {
        if (parts.length >= 2) {
          String header = parts[0];
          parts[0] = parts[1];
          parts[1] = header;
        }
        return String.join(".", parts);
      }
      case 8 -> {
        parts[part] = parts[part].repeat(2 + random.nextInt(80));
        return String.join(".", parts);
      }
      case 9 -> {
        // Another token's header: alg none, HS256, unknown or missing kid.
        parts[0] =
            TestTokens.base64url(
                List.of(
                        "{\"alg\":\"none\"}",
                        "{\"alg\":\"HS256\",\"kid\":\"" + kid + "\"}",
                        "{\"alg\":\"ES256\",\"kid\":\"other\"}",
                        "{\"alg\":\"ES256\"}",
                        "{\"alg\":\"ES256\",\"kid\":\"" + kid + "\",\"crit\":[\"exp\"]}")
                    .get(random.nextInt(5)));
        return String.join(".", parts);
      }
      case 10 -> {
        char c = token.isEmpty() ? 'a' : token.charAt(at);
        char swapped =
            Character.isUpperCase(c) ? Character.toLowerCase(c) : Character.toUpperCase(c);
        return token.substring(0, at) + swapped + token.substring(Math.min(token.length(), at + 1));
      }
      case 11 -> {
        return switch (random.nextInt(4)) {
          case 0 -> token + ".";
          case 1 -> token + "." + parts[parts.length - 1];
          case 2 -> "." + token;
          default -> parts[0] + ".." + parts[parts.length - 1];
        };
      }
      case 12 -> {
        String odd =
            List.of("\uff21", "\u00e9", "\0", "%", "=", "+", "/", "*", "\ud83d\ude00")
                .get(random.nextInt(9));
        return token.substring(0, at) + odd + token.substring(at);
      }
      default -> {
        // Past the length limit, or right at it.
        int target = MAX_TOKEN_LENGTH - 2 + random.nextInt(4);
        return token.length() >= target
            ? token.substring(0, target)
            : token + "A".repeat(target - token.length());
      }
    }
  }

  // ---- property 2: re-signed tokens against a model of the rules ----

  /** How the third segment was made. */
  enum Signer {
    TRUSTED_KEY,
    OTHER_KEY,
    NONE,
    HMAC_WITH_PUBLIC_KEY,
    RANDOM_BYTES
  }

  /** A forged token: its three segments, and what the model needs to judge it. */
  record Forged(String header, String payload, String signature, Signer signer) {
    String token() {
      return header + "." + payload + "." + signature;
    }

    @Override
    public String toString() {
      return signer
          + " "
          + Fuzz.show(new String(lenientDecode(header), StandardCharsets.UTF_8))
          + " . "
          + Fuzz.show(new String(lenientDecode(payload), StandardCharsets.UTF_8))
          + " -> "
          + Fuzz.show(token());
    }
  }

  @Test
  void acceptsExactlyTheTokensTheRulesAccept() {
    AtomicInteger accepted = new AtomicInteger();
    AtomicInteger tries = new AtomicInteger();
    Fuzz.forAll(
        "re-signed job tokens",
        SIGNED_TRIES,
        this::forge,
        Forged::toString,
        forged -> {
          tries.incrementAndGet();
          Optional<JsonNode> expected = modelAccepts(forged);
          Optional<JobTokenClaims> actual = verified(forged.token());
          assertEquals(
              expected.isPresent(),
              actual.isPresent(),
              expected.isPresent()
                  ? "refused a token the rules accept"
                  : "accepted a token the rules refuse");
          if (actual.isPresent()) {
            accepted.incrementAndGet();
            JsonNode claims = expected.get();
            assertEquals(claims.get("sub").textValue(), actual.get().jobId());
            assertEquals(claims.get("jti").textValue(), actual.get().tokenId());
            assertEquals(claims.get("scope").get("repo").textValue(), actual.get().repo());
            assertEquals(claims.get("iat").longValue(), actual.get().issuedAt().getEpochSecond());
            assertEquals(claims.get("nbf").longValue(), actual.get().notBefore().getEpochSecond());
            assertEquals(claims.get("exp").longValue(), actual.get().expiresAt().getEpochSecond());
          }
        });
    System.out.println("re-signed job tokens: " + accepted + " of " + tries + " verified");
    // A generator that never makes a valid token would let an over-strict verifier pass unnoticed.
    assertTrue(
        accepted.get() * 20 >= tries.get(),
        "too few valid tokens generated: " + accepted + " of " + tries);
  }

  private Forged forge(Random random) {
    String header = encodeSegment(random, headerBytes(random));
    String payload = encodeSegment(random, payloadBytes(random, header.length()));
    String signingInput = header + "." + payload;
    int pick = random.nextInt(20);
    Signer signer = pick < 16 ? Signer.TRUSTED_KEY : Signer.values()[pick - 15];
    byte[] signature =
        switch (signer) {
          case TRUSTED_KEY -> tokens.es256(signingInput);
          case OTHER_KEY -> stranger.es256(signingInput);
          case NONE -> new byte[0];
          case HMAC_WITH_PUBLIC_KEY -> hmac(signingInput);
          case RANDOM_BYTES -> randomBytes(random, 64);
        };
    return new Forged(header, payload, encodeSegment(random, signature), signer);
  }

  private byte[] headerBytes(Random random) {
    String json;
    if (random.nextInt(8) == 0) {
      json = junkJson(random, "{\"alg\":\"ES256\",\"kid\":\"" + kid + "\"}");
    } else {
      ObjectNode header = NODES.objectNode();
      header.set(
          "alg",
          pick(
              random,
              0.7,
              TextNode.valueOf("ES256"),
              TextNode.valueOf("none"),
              TextNode.valueOf("None"),
              TextNode.valueOf("HS256"),
              TextNode.valueOf("RS256"),
              TextNode.valueOf("ES384"),
              TextNode.valueOf("es256"),
              TextNode.valueOf("ES256 "),
              TextNode.valueOf(""),
              NullNode.getInstance(),
              LongNode.valueOf(256),
              NODES.arrayNode().add("ES256"),
              null));
      if (random.nextBoolean()) {
        header.put("typ", random.nextInt(4) == 0 ? "at+jwt" : "JWT");
      }
      header.set(
          "kid",
          pick(
              random,
              0.8,
              TextNode.valueOf(kid),
              TextNode.valueOf("unknown"),
              TextNode.valueOf(""),
              TextNode.valueOf(kid + " "),
              TextNode.valueOf(kid.toUpperCase(java.util.Locale.ROOT)),
              NullNode.getInstance(),
              LongNode.valueOf(1),
              null));
      if (random.nextInt(15) == 0) {
        header.putArray("crit").add("exp");
      }
      if (random.nextInt(10) == 0) {
        header.put(
            List.of("jku", "x5u", "jwk", "cty", "zip").get(random.nextInt(5)),
            "https://evil.example/k");
      }
      json =
          withDuplicates(
              random,
              header,
              List.of(
                  "\"alg\":\"none\"",
                  "\"alg\":\"ES256\"",
                  "\"kid\":\"" + kid + "\"",
                  "\"kid\":\"unknown\""));
    }
    return textBytes(random, json);
  }

  private byte[] payloadBytes(Random random, int headerLength) {
    String job = random.nextInt(10) == 0 ? RefNameFuzz.jobId(random) : "abc";
    // Valid as generated (issued up to half an hour ago, still live, at most two hours long);
    // mutations break it.
    int age = random.nextInt(1800);
    ObjectNode claims =
        TestTokens.claims(
            job,
            "demo",
            NOW.minusSeconds(age),
            Duration.ofSeconds(age + 1 + random.nextInt(7200 - age)));
    String json;
    if (random.nextInt(10) == 0) {
      json = junkJson(random, claims.toString());
    } else {
      int mutations = random.nextBoolean() ? 0 : 1 + random.nextInt(3);
      for (int i = 0; i < mutations; i++) {
        mutateClaim(random, claims, job);
      }
      json =
          withDuplicates(
              random,
              claims,
              List.of(
                  "\"sub\":\"other\"",
                  "\"sub\":\"" + job + "\"",
                  "\"exp\":" + (NOW_S + 999_999),
                  "\"scope\":{\"repo\":\"demo\",\"refs\":\"refs/*\"}",
                  "\"jti\":\"" + REVOKED + "\""));
      if (random.nextInt(12) == 0) {
        json = paddedToTokenLength(random, json, headerLength);
      }
    }
    return textBytes(random, json);
  }

  private void mutateClaim(Random random, ObjectNode claims, String job) {
    List<String> names = List.of("iss", "aud", "sub", "jti", "iat", "nbf", "exp", "scope", "cap");
    String name = names.get(random.nextInt(names.size()));
    switch (random.nextInt(5)) {
      case 0 -> claims.remove(name);
      case 1 -> claims.set(name, anyValue(random, job));
      case 2 -> claims.set(List.of("iat", "nbf", "exp").get(random.nextInt(3)), timeValue(random));
      case 3 -> {
        ObjectNode scope = claims.putObject("scope");
        scope.set(
            "repo",
            pick(
                random,
                0.6,
                TextNode.valueOf("demo"),
                TextNode.valueOf(""),
                TextNode.valueOf("other"),
                LongNode.valueOf(1),
                NullNode.getInstance(),
                null));
        scope.set(
            "refs",
            pick(
                random,
                0.6,
                TextNode.valueOf("refs/agents/" + job + "/*"),
                TextNode.valueOf("refs/agents/" + job + "/"),
                TextNode.valueOf("refs/*"),
                TextNode.valueOf("refs/agents/other/*"),
                TextNode.valueOf("refs/agents/" + job + "/**"),
                NODES.arrayNode().add("refs/agents/" + job + "/*"),
                null));
      }
      default -> {
        claims.set(
            "sub",
            pick(
                random,
                0.5,
                TextNode.valueOf(job),
                TextNode.valueOf(RefNameFuzz.jobId(random)),
                TextNode.valueOf(job.toUpperCase(java.util.Locale.ROOT)),
                TextNode.valueOf("../" + job),
                TextNode.valueOf(job + "/x"),
                TextNode.valueOf(""),
                TextNode.valueOf("-" + job),
                null));
        if (random.nextBoolean() && claims.get("sub") != null && claims.get("sub").isTextual()) {
          claims
              .putObject("scope")
              .put("repo", "demo")
              .put("refs", "refs/agents/" + claims.get("sub").textValue() + "/*");
        }
      }
    }
  }

  private static JsonNode anyValue(Random random, String job) {
    return pick(
        random,
        0,
        TextNode.valueOf(JobTokenVerifier.ISSUER),
        TextNode.valueOf(JobTokenVerifier.AUDIENCE),
        TextNode.valueOf(job),
        TextNode.valueOf(REVOKED),
        TextNode.valueOf(""),
        TextNode.valueOf("refs/agents/" + job + "/*"),
        TextNode.valueOf(JobTokenClaims.PUSH_AGENT_REF),
        LongNode.valueOf(NOW_S),
        BooleanNode.TRUE,
        NullNode.getInstance(),
        NODES.arrayNode().add(JobTokenVerifier.AUDIENCE),
        NODES.arrayNode().add("x").add(JobTokenVerifier.AUDIENCE),
        NODES.arrayNode().add(JobTokenClaims.PUSH_AGENT_REF),
        NODES.arrayNode().add(1),
        NODES.arrayNode(),
        NODES.objectNode(),
        NODES.objectNode().put("repo", "demo").put("refs", "refs/agents/" + job + "/*"));
  }

  private static JsonNode timeValue(Random random) {
    long[] edges = {
      NOW_S,
      NOW_S - 1,
      NOW_S + 1,
      NOW_S + 300,
      NOW_S + 301,
      NOW_S - 7200,
      NOW_S + 7200,
      NOW_S - 7201,
      NOW_S + 7201,
      0,
      -1,
      Long.MIN_VALUE,
      Long.MAX_VALUE,
      Instant.MIN.getEpochSecond(),
      Instant.MIN.getEpochSecond() - 1,
      Instant.MAX.getEpochSecond(),
      Instant.MAX.getEpochSecond() + 1
    };
    return switch (random.nextInt(8)) {
      case 0 ->
          BigIntegerNode.valueOf(
              BigInteger.TWO.pow(63).add(BigInteger.valueOf(random.nextInt(3) - 1)));
      case 1 -> DoubleNode.valueOf(NOW_S + (random.nextBoolean() ? 0.5 : 0.0));
      case 2 -> DecimalNode.valueOf(new BigDecimal(random.nextBoolean() ? "1E+3" : "1e400"));
      case 3 -> TextNode.valueOf(String.valueOf(NOW_S));
      default -> LongNode.valueOf(edges[random.nextInt(edges.length)]);
    };
  }

  /** Junk in place of a JSON object, or a valid object with something wrong around it. */
  private static String junkJson(Random random, String validObject) {
    List<String> junk =
        List.of(
            "",
            " ",
            "null",
            "[]",
            "\"ES256\"",
            "{",
            "}",
            "{}",
            "[" + validObject + "]",
            validObject + " x",
            validObject + "{}",
            validObject + "\n",
            " " + validObject,
            "\ufeff" + validObject,
            validObject.replace("\"", "'"),
            validObject.replaceFirst("}$", ",}"),
            "/*c*/" + validObject,
            validObject.replaceFirst("\\d+", "NaN"),
            "[".repeat(1200) + "]".repeat(1200),
            validObject + "\0",
            validObject.substring(0, validObject.length() / 2));
    return junk.get(random.nextInt(junk.size()));
  }

  /**
   * {@code node} as JSON, sometimes with a member added a second time (before or after the first).
   */
  private static String withDuplicates(Random random, ObjectNode node, List<String> members) {
    String json = node.toString();
    if (random.nextInt(8) != 0 || node.isEmpty()) {
      return json;
    }
    String member = members.get(random.nextInt(members.size()));
    return random.nextBoolean()
        ? "{" + member + "," + json.substring(1)
        : json.substring(0, json.length() - 1) + "," + member + "}";
  }

  /**
   * The claims with a padding claim that brings the whole token to within a few characters of the
   * limit.
   */
  private static String paddedToTokenLength(Random random, String json, int headerLength) {
    int target = MAX_TOKEN_LENGTH - 3 + random.nextInt(7);
    int payloadChars = target - headerLength - 2 - 86;
    int jsonBytes = payloadChars * 3 / 4 - "\"pad\":\"\",".length();
    int pad = Math.max(0, jsonBytes - json.length());
    return "{\"pad\":\"" + "p".repeat(pad) + "\"," + json.substring(1);
  }

  /** Mostly UTF-8; sometimes UTF-16 or with an invalid UTF-8 byte. */
  private static byte[] textBytes(Random random, String json) {
    return switch (random.nextInt(30)) {
      case 0 -> json.getBytes(StandardCharsets.UTF_16BE);
      case 1 -> {
        byte[] bytes = json.getBytes(StandardCharsets.UTF_8);
        if (bytes.length > 2) {
          bytes[1 + random.nextInt(bytes.length - 2)] = (byte) (0x80 | random.nextInt(0x80));
        }
        yield bytes;
      }
      default -> json.getBytes(StandardCharsets.UTF_8);
    };
  }

  /** Canonical unpadded base64url mostly; sometimes one of its non-canonical spellings. */
  private static String encodeSegment(Random random, byte[] bytes) {
    String canonical = BASE64URL.encodeToString(bytes);
    return random.nextInt(12) == 0 ? nonCanonical(random, canonical) : canonical;
  }

  /** A spelling of the same bytes (or nearly) that is not canonical unpadded base64url. */
  private static String nonCanonical(Random random, String segment) {
    return switch (random.nextInt(4)) {
      case 0 -> {
        int pad = (4 - segment.length() % 4) % 4;
        yield segment + "=".repeat(pad == 0 ? 4 : pad);
      }
      case 1 -> {
        String alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
        int last = segment.isEmpty() ? -1 : alphabet.indexOf(segment.charAt(segment.length() - 1));
        if (segment.length() % 4 == 0 || last < 0) {
          yield segment + "==";
        }
        // Set unused low bits of the last character: the same bytes to a lenient decoder.
        int unused = segment.length() % 4 == 2 ? 0x0f : 0x03;
        yield segment.substring(0, segment.length() - 1)
            + alphabet.charAt(last | (1 + random.nextInt(unused)));
      }
      case 2 -> segment.replace('-', '+').replace('_', '/');
      default -> Base64.getEncoder().encodeToString(lenientDecode(segment));
    };
  }

  // ---- the model ----

  /**
   * The signed claims if the rules of docs/hooks.md accept the token, judged independently of the
   * verifier.
   */
  private Optional<JsonNode> modelAccepts(Forged forged) {
    if (forged.token().length() > MAX_TOKEN_LENGTH
        || forged.signer() != Signer.TRUSTED_KEY
        || !canonical(forged.header())
        || !canonical(forged.payload())
        || !canonical(forged.signature())) {
      return Optional.empty();
    }
    JsonNode header = strictObject(forged.header());
    JsonNode claims = strictObject(forged.payload());
    if (header == null
        || claims == null
        || !"ES256".equals(text(header, "alg"))
        || header.has("crit")
        || !kid.equals(text(header, "kid"))) {
      return Optional.empty();
    }
    Long iat = seconds(claims.get("iat"));
    Long nbf = seconds(claims.get("nbf"));
    Long exp = seconds(claims.get("exp"));
    String sub = text(claims, "sub");
    JsonNode scope = claims.get("scope");
    boolean valid =
        JobTokenVerifier.ISSUER.equals(text(claims, "iss"))
            && audienceOk(claims.get("aud"))
            && iat != null
            && nbf != null
            && exp != null
            && exp > NOW_S
            && nbf <= NOW_S
            && iat <= NOW_S + 300
            && exp >= iat
            && exp - iat <= 7200
            && nonEmpty(text(claims, "jti"))
            && !REVOKED.equals(text(claims, "jti"))
            && sub != null
            && sub.matches("[a-z0-9][a-z0-9-]{0,63}")
            && scope != null
            && scope.isObject()
            && nonEmpty(text(scope, "repo"))
            && ("refs/agents/" + sub + "/*").equals(text(scope, "refs"))
            && containsText(claims.get("cap"), JobTokenClaims.PUSH_AGENT_REF);
    return valid ? Optional.of(claims) : Optional.empty();
  }

  private static boolean canonical(String segment) {
    return segment.matches("[A-Za-z0-9_-]*")
        && segment.length() % 4 != 1
        && BASE64URL.encodeToString(lenientDecode(segment)).equals(segment);
  }

  private static JsonNode strictObject(String segment) {
    try {
      String text =
          StandardCharsets.UTF_8
              .newDecoder()
              .onMalformedInput(CodingErrorAction.REPORT)
              .onUnmappableCharacter(CodingErrorAction.REPORT)
              .decode(ByteBuffer.wrap(lenientDecode(segment)))
              .toString();
      JsonNode node = STRICT_JSON.readTree(text);
      return node != null && node.isObject() ? node : null;
    } catch (CharacterCodingException | com.fasterxml.jackson.core.JsonProcessingException e) {
      return null;
    }
  }

  private static Long seconds(JsonNode value) {
    if (value == null || !value.isIntegralNumber() || !value.canConvertToLong()) {
      return null;
    }
    long s = value.longValue();
    return s < Instant.MIN.getEpochSecond() || s > Instant.MAX.getEpochSecond() ? null : s;
  }

  private static boolean audienceOk(JsonNode aud) {
    return aud != null
        && (JobTokenVerifier.AUDIENCE.equals(aud.textValue()) && aud.isTextual()
            || aud.isArray() && containsText(aud, JobTokenVerifier.AUDIENCE));
  }

  private static boolean containsText(JsonNode array, String value) {
    if (array == null || !array.isArray()) {
      return false;
    }
    for (JsonNode entry : array) {
      if (entry.isTextual() && entry.textValue().equals(value)) {
        return true;
      }
    }
    return false;
  }

  private static String text(JsonNode node, String field) {
    JsonNode value = node.get(field);
    return value != null && value.isTextual() ? value.textValue() : null;
  }

  private static boolean nonEmpty(String value) {
    return value != null && !value.isEmpty();
  }

  // ---- helpers ----

  /**
   * The verifier's verdict; any exception but InvalidJobTokenException propagates and fails the
   * try.
   */
  private Optional<JobTokenClaims> verified(String token) {
    try {
      return Optional.of(verifier.verify(token));
    } catch (InvalidJobTokenException e) {
      assertNotNull(e.getMessage());
      assertFalse(
          token.length() > 20 && e.getMessage().contains(token), "the refusal echoes the token");
      return Optional.empty();
    }
  }

  @SafeVarargs
  private static <T> T pick(Random random, double firstWeight, T... choices) {
    if (random.nextDouble() < firstWeight) {
      return choices[0];
    }
    return choices[random.nextInt(choices.length)];
  }

  private static byte[] lenientDecode(String segment) {
    try {
      return Base64.getUrlDecoder()
          .decode(segment.replace('+', '-').replace('/', '_').replace("=", ""));
    } catch (IllegalArgumentException e) {
      return new byte[0];
    }
  }

  private static String randomBase64url(Random random, int length) {
    String alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    StringBuilder out = new StringBuilder();
    for (int i = 0; i < length; i++) {
      out.append(alphabet.charAt(random.nextInt(alphabet.length())));
    }
    return out.toString();
  }

  private static byte[] randomBytes(Random random, int length) {
    byte[] bytes = new byte[length];
    random.nextBytes(bytes);
    return bytes;
  }

  private byte[] hmac(String signingInput) {
    try {
      Mac mac = Mac.getInstance("HmacSHA256");
      mac.init(new SecretKeySpec(tokens.publicKey().getEncoded(), "HmacSHA256"));
      return mac.doFinal(signingInput.getBytes(StandardCharsets.US_ASCII));
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException(e);
    }
  }
}
