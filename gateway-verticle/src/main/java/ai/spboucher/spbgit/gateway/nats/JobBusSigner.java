package ai.spboucher.spbgit.gateway.nats;

import ai.spboucher.spbgit.common.DetachedJws;
import ai.spboucher.spbgit.common.TokenSeal;
import ai.spboucher.spbgit.gateway.auth.RunnerKeys;
import ai.spboucher.spbgit.gateway.auth.SigningKey;
import ai.spboucher.spbgit.proto.CancelJob;
import ai.spboucher.spbgit.proto.JobRequest;
import ai.spboucher.spbgit.proto.SealedJobToken;
import ai.spboucher.spbgit.proto.Signatures;
import com.google.protobuf.ByteString;
import io.nats.client.impl.Headers;
import java.io.IOException;
import java.security.PublicKey;
import java.util.Map;

/**
 * What makes the gateway's messages to runners trustworthy over NATS (docs/protocol.md, "Signed
 * messages"): each job's token is sealed to every authorized runner key ({@link RunnerKeys}), never
 * sent in clear, and every job request and cancel is signed with the gateway's job-bus key, in the
 * {@link Signatures#HEADER} header, over the exact bytes published.
 *
 * <p>Threading: {@link #request} blocks (it may re-read the runner keys): call it on a worker
 * thread. {@link #cancel} is CPU only. Thread-safe.
 */
public final class JobBusSigner {

  private static final System.Logger LOG = System.getLogger(JobBusSigner.class.getName());

  /** A message as it is published: its bytes and the header signing them. */
  public record Signed(byte[] data, Headers headers) {}

  private final SigningKey key;
  private final RunnerKeys runners;

  public JobBusSigner(SigningKey jobBusKey, RunnerKeys runners) {
    this.key = jobBusKey;
    this.runners = runners;
  }

  /**
   * {@code request} with {@code jobToken} sealed to each authorized runner, signed. With no runner
   * key registered the request carries no copy (no runner will run it) and a warning says so.
   * Blocking.
   */
  public Signed request(JobRequest request, String jobToken) throws IOException {
    Map<String, PublicKey> recipients = runners.current();
    if (recipients.isEmpty()) {
      LOG.log(
          System.Logger.Level.WARNING,
          "job "
              + request.getJobId()
              + " is queued with its token sealed to no runner: no runner key is registered in "
              + runners.dir()
              + " (SPB_RUNNER_KEYS), so no runner will run it");
    }
    JobRequest.Builder sealed = request.toBuilder().clearSealedJobTokens();
    for (TokenSeal.Sealed copy : TokenSeal.seal(request.getJobId(), jobToken, recipients)) {
      sealed.addSealedJobTokens(
          SealedJobToken.newBuilder()
              .setRecipientKid(copy.recipientKid())
              .setEphemeralKey(ByteString.copyFrom(copy.ephemeralKey()))
              .setNonce(ByteString.copyFrom(copy.nonce()))
              .setCiphertext(ByteString.copyFrom(copy.ciphertext())));
    }
    return signed(Signatures.JOB_REQUEST, sealed.build().toByteArray());
  }

  /** {@code cancel}, signed. */
  public Signed cancel(CancelJob cancel) {
    return signed(Signatures.CANCEL_JOB, cancel.toByteArray());
  }

  private Signed signed(String type, byte[] data) {
    Headers headers = new Headers();
    headers.put(Signatures.HEADER, DetachedJws.sign(type, key.keyId(), key.privateKey(), data));
    return new Signed(data, headers);
  }
}
