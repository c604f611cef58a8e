package ai.spboucher.spbgit.runner.nats;

import ai.spboucher.spbgit.proto.EgressAttempt;
import ai.spboucher.spbgit.proto.ModelCall;
import ai.spboucher.spbgit.runner.egress.EgressRecord;
import ai.spboucher.spbgit.runner.model.ModelCallRecord;
import com.google.protobuf.ByteString;

/** The wire form of what the egress proxy and the model endpoint record. */
public final class EventMessages {

  /** {@link EgressAttempt#getVia()} of an attempt through the egress proxy. */
  public static final String VIA_PROXY = "proxy";

  /**
   * {@link EgressAttempt#getVia()} of a model call the runner forwarded (or refused) to the
   * provider.
   */
  public static final String VIA_MODEL_ENDPOINT = "model_endpoint";

  /**
   * {@link EgressAttempt#getVia()} of a request of the job's git to its repository, through the git
   * relay.
   */
  public static final String VIA_GIT_RELAY = "git_relay";

  private EventMessages() {}

  /**
   * @param via {@link #VIA_PROXY} or {@link #VIA_GIT_RELAY}
   */
  /** The job's phases, as {@code EgressAttempt.phase} names them. */
  public static final String PHASE_CLONE = "clone";

  public static final String PHASE_SETUP = "setup";
  public static final String PHASE_AGENT = "agent";

  /** An attempt of the agent phase (the only one with a model endpoint). */
  public static EgressAttempt egress(EgressRecord record, String via) {
    return egress(record, via, PHASE_AGENT);
  }

  public static EgressAttempt egress(EgressRecord record, String via, String phase) {
    return EgressAttempt.newBuilder()
        .setMethod(record.method())
        .setHost(record.host())
        .setPort(record.port())
        .setAllowed(record.allowed())
        .setBytesUp(record.bytesUp())
        .setBytesDown(record.bytesDown())
        .setDurationMs(record.duration().toMillis())
        .setFailure(record.failure() == null ? "" : record.failure())
        .setStartedEpochMs(record.startedAt().toEpochMilli())
        .setVia(via)
        .setPhase(phase)
        .build();
  }

  public static ModelCall modelCall(ModelCallRecord record) {
    return ModelCall.newBuilder()
        .setProvider(record.provider())
        .setModel(record.model())
        .setStatus(record.status())
        .setInputTokens(record.usage().inputTokens())
        .setOutputTokens(record.usage().outputTokens())
        .setDurationMs(record.duration().toMillis())
        .setRequest(ByteString.copyFrom(record.request()))
        .setTruncated(record.truncated())
        .setError(record.error() == null ? "" : record.error())
        .setPath(record.path())
        .setStreamed(record.streamed())
        .build();
  }

  /**
   * A model call as an egress attempt to the provider's {@code host:port}: allowed when it was
   * forwarded.
   */
  public static EgressAttempt egress(
      ModelCallRecord record, String providerHost, int providerPort) {
    String failure = record.egressFailure();
    return EgressAttempt.newBuilder()
        .setMethod(record.method().isEmpty() ? "POST" : record.method())
        .setHost(providerHost)
        .setPort(providerPort)
        .setAllowed(record.forwarded())
        .setBytesUp(record.bytesUp())
        .setBytesDown(record.bytesDown())
        .setDurationMs(record.duration().toMillis())
        .setFailure(failure == null ? "" : failure)
        .setStartedEpochMs(record.startedAt().toEpochMilli())
        .setVia(VIA_MODEL_ENDPOINT)
        .setPhase(PHASE_AGENT)
        .build();
  }
}
