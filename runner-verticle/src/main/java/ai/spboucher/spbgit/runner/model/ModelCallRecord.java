package ai.spboucher.spbgit.runner.model;

import java.time.Duration;
import java.time.Instant;

/**
 * One request the agent made to its job's {@link ModelEndpoint}, as the runner saw it.
 *
 * @param startedAt when the endpoint accepted the connection
 * @param provider {@code openai} or {@code anthropic}
 * @param model the job's model (what the request was, or would have been, sent with)
 * @param method the request's method, or empty when no request head could be read
 * @param path the request's path (without its query), or empty
 * @param status the status the agent got: the provider's, or the endpoint's own
 * @param usage what the provider reported for this call (zero when nothing was forwarded); for a
 *     stream cut or dropped before its end, the reported usage where known and the estimate
 *     elsewhere ({@link StreamTally#estimate()})
 * @param duration from accepting the connection to the end of the answer
 * @param request the body the agent sent, exactly, up to {@link
 *     ModelEndpoint#RECORDED_REQUEST_BYTES}
 * @param truncated whether {@code request} holds only the beginning of the body
 * @param error null for a 2xx answer of the provider; otherwise why the call failed
 * @param forwarded whether the request was sent to the provider
 * @param answered whether the provider answered (false when it timed out or could not be reached)
 * @param bytesUp body bytes sent to the provider
 * @param bytesDown body bytes the provider answered
 * @param streamed whether the answer was relayed as server-sent events, as they came
 */
public record ModelCallRecord(
    Instant startedAt,
    String provider,
    String model,
    String method,
    String path,
    int status,
    Usage usage,
    Duration duration,
    byte[] request,
    boolean truncated,
    String error,
    boolean forwarded,
    boolean answered,
    long bytesUp,
    long bytesDown,
    boolean streamed) {

  /** Why the call did not reach the provider, for the egress record; null when it did. */
  public String egressFailure() {
    return answered ? null : error;
  }
}
