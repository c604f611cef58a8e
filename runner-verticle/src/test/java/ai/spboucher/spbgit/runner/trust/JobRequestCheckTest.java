package ai.spboucher.spbgit.runner.trust;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.spboucher.spbgit.common.DetachedJws;
import ai.spboucher.spbgit.common.EcKeys;
import ai.spboucher.spbgit.common.TokenSeal;
import ai.spboucher.spbgit.proto.CancelJob;
import ai.spboucher.spbgit.proto.JobRequest;
import ai.spboucher.spbgit.proto.Mode;
import ai.spboucher.spbgit.proto.SealedJobToken;
import ai.spboucher.spbgit.proto.Signatures;
import ai.spboucher.spbgit.testsupport.ShiftedClock;
import com.google.protobuf.ByteString;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.PublicKey;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class JobRequestCheckTest {

  private static final Instant NOW = Instant.parse("2026-12-03T12:00:00Z");
  private static final Clock CLOCK = Clock.fixed(NOW, ZoneOffset.UTC);
  private static final String TOKEN = "eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJqIn0.c2ln";

  @TempDir Path tmp;
  private final KeyPair gatewayKey = EcKeys.generate();
  private final String gatewayKid = EcKeys.keyId(gatewayKey.getPublic());
  private RunnerKey runner;
  private JobRequestCheck check;

  @BeforeEach
  void keys() throws Exception {
    Path gatewayDir = Files.createDirectories(tmp.resolve("job-bus"));
    Files.writeString(
        gatewayDir.resolve("job-bus-signing.pub.pem"), EcKeys.publicPem(gatewayKey.getPublic()));
    runner = RunnerKey.loadOrCreate(tmp.resolve("runner/runner-key.pem"));
    check = new JobRequestCheck(GatewayKeys.load(gatewayDir, CLOCK), runner, CLOCK, 3);
  }

  /** A request as the gateway builds it: its token sealed to {@code recipients}. */
  private JobRequest request(String jobId, Instant created, Map<String, PublicKey> recipients) {
    JobRequest.Builder request =
        JobRequest.newBuilder()
            .setJobId(jobId)
            .setRepo("demo")
            .setMode(Mode.MODE_EXEC)
            .setExecCommand("echo hi")
            .setCreatedEpochMs(created.toEpochMilli());
    for (TokenSeal.Sealed copy : TokenSeal.seal(jobId, TOKEN, recipients)) {
      request.addSealedJobTokens(
          SealedJobToken.newBuilder()
              .setRecipientKid(copy.recipientKid())
              .setEphemeralKey(ByteString.copyFrom(copy.ephemeralKey()))
              .setNonce(ByteString.copyFrom(copy.nonce()))
              .setCiphertext(ByteString.copyFrom(copy.ciphertext())));
    }
    return request.build();
  }

  private JobRequest request(String jobId) throws Exception {
    return request(jobId, NOW, Map.of(runner.keyId(), EcKeys.readPublic(runner.publicFile())));
  }

  private String signed(byte[] data) {
    return DetachedJws.sign(Signatures.JOB_REQUEST, gatewayKid, gatewayKey.getPrivate(), data);
  }

  @Test
  void aGenuineRequestPassesAndItsTokenOpens() throws Exception {
    byte[] data = request("job-1").toByteArray();
    JobRequest request = check.signedRequest(data, signed(data));
    check.requireNew(request);
    assertEquals(TOKEN, check.jobToken(request));
  }

  @Test
  void refusesAnUnsignedRequest() throws Exception {
    byte[] data = request("job-1").toByteArray();
    RequestRefused refused =
        assertThrows(RequestRefused.class, () -> check.signedRequest(data, null));
    assertEquals("request not signed by the gateway", refused.getMessage());
  }

  @Test
  void refusesAGenuineRequestWithOneByteAltered() throws Exception {
    JobRequest genuine = request("job-1");
    String signature = signed(genuine.toByteArray());
    byte[] altered = genuine.toBuilder().setExecCommand("echo hI").build().toByteArray();
    RequestRefused refused =
        assertThrows(RequestRefused.class, () -> check.signedRequest(altered, signature));
    assertTrue(refused.getMessage().contains("forged or altered"), refused.getMessage());
  }

  @Test
  void refusesARequestSignedWithAnotherKey() throws Exception {
    KeyPair attacker = EcKeys.generate();
    byte[] data = request("job-1").toByteArray();
    String ownKid =
        DetachedJws.sign(
            Signatures.JOB_REQUEST,
            EcKeys.keyId(attacker.getPublic()),
            attacker.getPrivate(),
            data);
    RequestRefused unknown =
        assertThrows(RequestRefused.class, () -> check.signedRequest(data, ownKid));
    assertTrue(unknown.getMessage().contains("unknown key"), unknown.getMessage());
    String gatewaysKid =
        DetachedJws.sign(Signatures.JOB_REQUEST, gatewayKid, attacker.getPrivate(), data);
    RequestRefused forged =
        assertThrows(RequestRefused.class, () -> check.signedRequest(data, gatewaysKid));
    assertTrue(forged.getMessage().contains("forged or altered"), forged.getMessage());
  }

  @Test
  void aCancelSignatureIsNoRequestSignatureNorTheOtherWayRound() throws Exception {
    byte[] request = request("job-1").toByteArray();
    String asCancel =
        DetachedJws.sign(Signatures.CANCEL_JOB, gatewayKid, gatewayKey.getPrivate(), request);
    assertThrows(RequestRefused.class, () -> check.signedRequest(request, asCancel));
    byte[] cancel = CancelJob.newBuilder().setJobId("job-1").build().toByteArray();
    assertThrows(RequestRefused.class, () -> check.signedCancel(cancel, signed(cancel)));
    assertThrows(RequestRefused.class, () -> check.signedCancel(cancel, null));
    assertEquals(
        "job-1",
        check
            .signedCancel(
                cancel,
                DetachedJws.sign(
                    Signatures.CANCEL_JOB, gatewayKid, gatewayKey.getPrivate(), cancel))
            .getJobId());
  }

  @Test
  void refusesAReplayOfAJobThatRanHereAndForgetsOnlyTheOldest() throws Exception {
    for (String id : new String[] {"a", "b", "c"}) {
      check.runs(id);
    }
    RequestRefused replay =
        assertThrows(RequestRefused.class, () -> check.requireNew(request("a")));
    assertEquals("replay: job a ran on this runner", replay.getMessage());
    check.runs("d");
    check.requireNew(request("a")); // Only the last three are remembered here.
    assertThrows(RequestRefused.class, () -> check.requireNew(request("d")));
  }

  @Test
  void refusesARequestOlderThanAJobTokenLives() throws Exception {
    Map<String, PublicKey> me = Map.of(runner.keyId(), EcKeys.readPublic(runner.publicFile()));
    check.requireNew(request("fresh", NOW.minus(Duration.ofHours(2)), me));
    RequestRefused old =
        assertThrows(
            RequestRefused.class,
            () -> check.requireNew(request("old", NOW.minus(Duration.ofMinutes(126)), me)));
    assertTrue(old.getMessage().startsWith("replay: the request was created at"), old.getMessage());
    assertThrows(RequestRefused.class, () -> check.requireNew(request("zero", Instant.EPOCH, me)));
  }

  @Test
  void refusesARequestNotSealedToThisRunner() throws Exception {
    KeyPair other = EcKeys.generate();
    JobRequest forOthers =
        request("job-1", NOW, Map.of(EcKeys.keyId(other.getPublic()), other.getPublic()));
    RequestRefused refused = assertThrows(RequestRefused.class, () -> check.jobToken(forOthers));
    assertTrue(refused.getMessage().startsWith("not sealed to this runner"), refused.getMessage());
    assertThrows(RequestRefused.class, () -> check.jobToken(request("job-1", NOW, Map.of())));
  }

  @Test
  void refusesACopyForThisRunnerThatDoesNotOpen() throws Exception {
    JobRequest genuine = request("job-1");
    // The copy of another job, moved into this one: the job id is bound into the key.
    JobRequest moved = genuine.toBuilder().setJobId("job-2").build();
    RequestRefused refused = assertThrows(RequestRefused.class, () -> check.jobToken(moved));
    assertEquals("its job token sealed to this runner does not open", refused.getMessage());
    assertTrue(!refused.getMessage().contains(TOKEN));
  }

  @Test
  void aRotatedGatewayKeyIsReadWhenItFirstSignsNoSoonerThanTheInterval() throws Exception {
    ShiftedClock clock = new ShiftedClock();
    Path dir = tmp.resolve("rotating");
    Files.createDirectories(dir);
    Files.writeString(dir.resolve("old.pub.pem"), EcKeys.publicPem(gatewayKey.getPublic()));
    GatewayKeys keys = GatewayKeys.load(dir, clock);
    JobRequestCheck rotating = new JobRequestCheck(keys, runner, clock);
    KeyPair next = EcKeys.generate();
    Files.writeString(dir.resolve("new.pub.pem"), EcKeys.publicPem(next.getPublic()));
    byte[] data = request("job-1").toByteArray();
    String signature =
        DetachedJws.sign(
            Signatures.JOB_REQUEST, EcKeys.keyId(next.getPublic()), next.getPrivate(), data);
    // Read at load, the directory is not read again within the interval...
    assertThrows(RequestRefused.class, () -> rotating.signedRequest(data, signature));
    clock.shift(GatewayKeys.REREAD_INTERVAL.plusSeconds(1));
    // ...and after it, the unknown key id makes it read the new key.
    assertEquals("job-1", rotating.signedRequest(data, signature).getJobId());
    assertEquals(
        "job-1",
        rotating.signedRequest(data, signed(data)).getJobId(),
        "the retired key still verifies");
  }

  @Test
  void aRunnerWithoutGatewayKeysRefusesToStart() throws Exception {
    IllegalStateException unset =
        assertThrows(IllegalStateException.class, () -> GatewayKeys.load(null, CLOCK));
    assertTrue(unset.getMessage().startsWith("SPB_GATEWAY_KEYS is not set"), unset.getMessage());
    Path empty = Files.createDirectories(tmp.resolve("empty"));
    Files.writeString(empty.resolve("junk.pub.pem"), "not a key");
    IllegalStateException none =
        assertThrows(IllegalStateException.class, () -> GatewayKeys.load(empty, CLOCK));
    assertTrue(none.getMessage().startsWith("no gateway job-bus key in"), none.getMessage());
    assertThrows(
        IllegalStateException.class, () -> GatewayKeys.load(tmp.resolve("missing"), CLOCK));
    Path file = tmp.resolve("one.pem");
    Files.writeString(file, EcKeys.publicPem(gatewayKey.getPublic()), StandardCharsets.US_ASCII);
    assertEquals(gatewayKey.getPublic(), GatewayKeys.load(file, CLOCK).key(gatewayKid));
  }
}
