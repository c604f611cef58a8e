package ai.spboucher.spbgit.gateway.nats;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

import ai.spboucher.spbgit.common.DetachedJws;
import ai.spboucher.spbgit.common.EcKeys;
import ai.spboucher.spbgit.common.InvalidSignatureException;
import ai.spboucher.spbgit.common.TokenSeal;
import ai.spboucher.spbgit.gateway.auth.RunnerKeys;
import ai.spboucher.spbgit.gateway.auth.SigningKey;
import ai.spboucher.spbgit.proto.CancelJob;
import ai.spboucher.spbgit.proto.JobRequest;
import ai.spboucher.spbgit.proto.SealedJobToken;
import ai.spboucher.spbgit.proto.Signatures;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.PublicKey;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class JobBusSignerTest {

  private static final String TOKEN = "eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJqb2ItMSJ9.c2lnbmF0dXJl";

  @TempDir Path keys;

  @Test
  void aRequestCarriesItsTokenSealedToEachRunnerAndIsSignedOverItsExactBytes() throws Exception {
    SigningKey key = SigningKey.loadOrCreate(SigningKey.KeyFiles.jobBus(keys));
    Path runners = Files.createDirectories(keys.resolve("runners"));
    KeyPair left = EcKeys.generate();
    KeyPair right = EcKeys.generate();
    Files.writeString(runners.resolve("left.pub.pem"), EcKeys.publicPem(left.getPublic()));
    Files.writeString(runners.resolve("right.pub.pem"), EcKeys.publicPem(right.getPublic()));
    JobBusSigner signer = new JobBusSigner(key, new RunnerKeys(runners));

    JobBusSigner.Signed signed =
        signer.request(JobRequest.newBuilder().setJobId("job-1").setRepo("demo").build(), TOKEN);

    assertFalse(
        new String(signed.data(), StandardCharsets.ISO_8859_1).contains("eyJ"),
        "no token in clear");
    Map<String, PublicKey> gateway = Map.of(key.keyId(), key.publicKey());
    String jws = signed.headers().getFirst(Signatures.HEADER);
    assertEquals(
        key.keyId(), DetachedJws.verify(jws, signed.data(), Signatures.JOB_REQUEST, gateway::get));
    assertThrows(
        InvalidSignatureException.class,
        () -> DetachedJws.verify(jws, signed.data(), Signatures.CANCEL_JOB, gateway::get));

    JobRequest request = JobRequest.parseFrom(signed.data());
    assertEquals(2, request.getSealedJobTokensCount());
    for (KeyPair runner : new KeyPair[] {left, right}) {
      String kid = EcKeys.keyId(runner.getPublic());
      SealedJobToken copy =
          request.getSealedJobTokensList().stream()
              .filter(c -> c.getRecipientKid().equals(kid))
              .findFirst()
              .orElseThrow();
      assertEquals(
          TOKEN,
          TokenSeal.open(
              "job-1",
              new TokenSeal.Sealed(
                  kid,
                  copy.getEphemeralKey().toByteArray(),
                  copy.getNonce().toByteArray(),
                  copy.getCiphertext().toByteArray()),
              kid,
              runner.getPrivate()));
    }
  }

  @Test
  void withNoRunnerKeyARequestIsStillSignedAndCarriesNoCopy() throws Exception {
    SigningKey key = SigningKey.loadOrCreate(SigningKey.KeyFiles.jobBus(keys));
    JobBusSigner.Signed signed =
        new JobBusSigner(key, new RunnerKeys(keys.resolve("none")))
            .request(JobRequest.newBuilder().setJobId("job-1").build(), TOKEN);
    assertEquals(0, JobRequest.parseFrom(signed.data()).getSealedJobTokensCount());
    DetachedJws.verify(
        signed.headers().getFirst(Signatures.HEADER),
        signed.data(),
        Signatures.JOB_REQUEST,
        Map.of(key.keyId(), key.publicKey())::get);
  }

  @Test
  void aCancelIsSignedAsACancel() throws Exception {
    SigningKey key = SigningKey.loadOrCreate(SigningKey.KeyFiles.jobBus(keys));
    JobBusSigner.Signed signed =
        new JobBusSigner(key, new RunnerKeys(keys.resolve("none")))
            .cancel(CancelJob.newBuilder().setJobId("job-1").setReason("owner").build());
    DetachedJws.verify(
        signed.headers().getFirst(Signatures.HEADER),
        signed.data(),
        Signatures.CANCEL_JOB,
        Map.of(key.keyId(), key.publicKey())::get);
  }
}
