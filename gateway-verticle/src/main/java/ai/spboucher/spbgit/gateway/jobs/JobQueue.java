package ai.spboucher.spbgit.gateway.jobs;

import ai.spboucher.spbgit.proto.JobEvent;
import ai.spboucher.spbgit.proto.JobRequest;
import io.vertx.core.Context;
import io.vertx.core.Future;
import java.util.function.Function;

/**
 * Where job requests go to runners and their status changes come back from (NATS JetStream in the
 * gateway).
 *
 * <p>Threading: {@link #isConnected} and {@link #publish} do not block; {@link #cancel} blocks
 * (call it on a worker thread). Status events and refusals reach the handler on the context given
 * to {@link #consumeStatus}, one at a time.
 */
public interface JobQueue {

  /** Whether requests can be published and cancelled now. */
  boolean isConnected();

  /**
   * Queues a request, carrying {@code jobToken} sealed to the runners (never in clear); the future,
   * completed on {@code context}, carries the queue position it was stored at.
   */
  Future<Long> publish(JobRequest request, String jobToken, Context context);

  /**
   * Tells every runner to stop the job, and removes its request from the queue if no runner took it
   * yet. Blocking.
   *
   * @return whether the request was removed (no runner will start the job)
   */
  boolean cancel(String jobId, long queueSequence);

  /**
   * Starts handing status events and runners' refusals of requests ({@link
   * ai.spboucher.spbgit.proto.RequestRefusal}) to {@code handler} on {@code context}; an event
   * counts as handled (and is not delivered again) once the handler's future succeeds.
   */
  void consumeStatus(Context context, Function<JobEvent, Future<?>> handler);
}
