package ai.spboucher.spbgit.runner.trust;

import ai.spboucher.spbgit.common.DetachedJws;
import ai.spboucher.spbgit.common.InvalidSignatureException;
import ai.spboucher.spbgit.common.TokenSeal;
import ai.spboucher.spbgit.proto.CancelJob;
import ai.spboucher.spbgit.proto.JobRequest;
import ai.spboucher.spbgit.proto.SealedJobToken;
import ai.spboucher.spbgit.proto.Signatures;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Parser;
import java.security.GeneralSecurityException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/**
 * What a runner checks of a job request before it does anything with it, and of a cancel before it
 * stops a job (docs/sandbox.md, "What NATS access allows"): the gateway signed exactly these bytes
 * with its job-bus key ({@link GatewayKeys}), as a request (or as a cancel); the request is no
 * replay, neither of a job that ran here nor one older than a job token may live; and it is sealed
 * to this runner, whose key ({@link RunnerKey}) opens its job token. Whether another runner already
 * reported the job is the dispatcher's to ask NATS.
 *
 * <p>Thread-safe; CPU only, except when an unknown key id makes {@link GatewayKeys} re-read.
 */
public final class JobRequestCheck {

  /**
   * How old a request may be: the longest a job token lives, plus the clock skew the gateway
   * allows. An older one can only be a copy: its job's token has expired.
   */
  public static final Duration MAX_AGE = Duration.ofHours(2).plus(Duration.ofMinutes(5));

  /** How many job ids that ran here are remembered to refuse their replays. */
  public static final int REMEMBERED_JOBS = 10_000;

  private final GatewayKeys gateway;
  private final RunnerKey own;
  private final Clock clock;
  private final Set<String> ranHere;

  public JobRequestCheck(GatewayKeys gateway, RunnerKey own, Clock clock) {
    this(gateway, own, clock, REMEMBERED_JOBS);
  }

  JobRequestCheck(GatewayKeys gateway, RunnerKey own, Clock clock, int remembered) {
    this.gateway = gateway;
    this.own = own;
    this.clock = clock;
    this.ranHere =
        Collections.newSetFromMap(
            Collections.synchronizedMap(
                new LinkedHashMap<>() {
                  @Override
                  protected boolean removeEldestEntry(Map.Entry<String, Boolean> eldest) {
                    return size() > remembered;
                  }
                }));
  }

  /**
   * The request in {@code data}, once its {@code signature} (the {@link Signatures#HEADER}) is the
   * gateway's over exactly these bytes.
   */
  public JobRequest signedRequest(byte[] data, String signature) throws RequestRefused {
    verify(data, signature, Signatures.JOB_REQUEST, "request");
    return parse(JobRequest.parser(), data);
  }

  /** The cancel in {@code data}, once its {@code signature} is the gateway's. */
  public CancelJob signedCancel(byte[] data, String signature) throws RequestRefused {
    verify(data, signature, Signatures.CANCEL_JOB, "cancel");
    return parse(CancelJob.parser(), data);
  }

  private static <T> T parse(Parser<T> parser, byte[] data) throws RequestRefused {
    try {
      return parser.parseFrom(data);
    } catch (InvalidProtocolBufferException e) {
      throw new RequestRefused("signed but unreadable: " + e.getMessage());
    }
  }

  /**
   * Refuses a request that is a replay as far as this runner can tell: its job ran (or runs) here,
   * or it was created longer ago than a job token lives ({@link #MAX_AGE}, by this runner's clock).
   */
  public void requireNew(JobRequest request) throws RequestRefused {
    if (ranHere.contains(request.getJobId())) {
      throw new RequestRefused("replay: job " + request.getJobId() + " ran on this runner");
    }
    Instant created = Instant.ofEpochMilli(request.getCreatedEpochMs());
    if (created.plus(MAX_AGE).isBefore(clock.instant())) {
      throw new RequestRefused(
          "replay: the request was created at " + created + ", longer ago than a job token lives");
    }
  }

  /** Remembers that {@code jobId} runs here: a later copy of its request is a replay. */
  public void runs(String jobId) {
    ranHere.add(jobId);
  }

  /**
   * The request's job token, opened from the copy sealed to this runner's key. Never logged.
   *
   * @throws RequestRefused when no copy is sealed to this runner, or it does not open
   */
  public String jobToken(JobRequest request) throws RequestRefused {
    for (SealedJobToken copy : request.getSealedJobTokensList()) {
      if (own.keyId().equals(copy.getRecipientKid())) {
        try {
          return TokenSeal.open(
              request.getJobId(),
              new TokenSeal.Sealed(
                  copy.getRecipientKid(),
                  copy.getEphemeralKey().toByteArray(),
                  copy.getNonce().toByteArray(),
                  copy.getCiphertext().toByteArray()),
              own.keyId(),
              own.privateKey());
        } catch (GeneralSecurityException e) {
          throw new RequestRefused("its job token sealed to this runner does not open");
        }
      }
    }
    throw new RequestRefused(
        "not sealed to this runner (key "
            + own.keyId()
            + " is not among the gateway's runner keys)");
  }

  private void verify(byte[] data, String signature, String type, String what)
      throws RequestRefused {
    try {
      DetachedJws.verify(signature, data, type, gateway::key);
    } catch (InvalidSignatureException e) {
      throw new RequestRefused(
          switch (e.problem()) {
            case MISSING -> what + " not signed by the gateway";
            case UNKNOWN_KEY ->
                what
                    + " "
                    + e.getMessage()
                    + ", not one of the gateway's (SPB_GATEWAY_KEYS at "
                    + gateway.location()
                    + ")";
            default -> what + " not signed by the gateway: " + e.getMessage();
          });
    }
  }
}
