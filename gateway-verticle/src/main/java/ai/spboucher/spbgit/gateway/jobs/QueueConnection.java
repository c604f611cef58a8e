package ai.spboucher.spbgit.gateway.jobs;

import ai.spboucher.spbgit.gateway.errors.RequestException;

/**
 * The job queue once connected: creating and cancelling jobs need it, and fail as unavailable (503)
 * until the gateway has connected to NATS or while the connection is down.
 *
 * <p>Threading: attached and read on the gateway's context.
 */
final class QueueConnection {

  private JobQueue queue;

  void attach(JobQueue jobQueue) {
    this.queue = jobQueue;
  }

  /**
   * The connected queue.
   *
   * @throws RequestException.Unavailable with {@code refusal} when there is none
   */
  JobQueue require(String refusal) {
    JobQueue current = queue;
    if (current == null || !current.isConnected()) {
      throw new RequestException.Unavailable(refusal);
    }
    return current;
  }
}
