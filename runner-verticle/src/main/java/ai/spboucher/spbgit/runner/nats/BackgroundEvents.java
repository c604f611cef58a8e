package ai.spboucher.spbgit.runner.nats;

import ai.spboucher.spbgit.proto.EgressAttempt;
import ai.spboucher.spbgit.proto.ModelCall;
import java.time.Duration;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Publishes a job's egress attempts and model calls for the threads that observe them (egress proxy
 * and model endpoint workers), which must not wait for JetStream: events are queued and one thread
 * of its own publishes them through the job's {@link EventPublisher}, in the order they were
 * offered. The queue is bounded, by count and by bytes: beyond that an event is dropped (before it
 * gets a sequence number, so the subject stays gap-free) and counted in {@link #dropped()}.
 *
 * <p>Threading: {@link #egress} and {@link #modelCall} are thread-safe and never block; {@link
 * #close} is called once, by the job's thread.
 */
public final class BackgroundEvents {

  public static final int MAX_PENDING = 10_000;
  public static final long MAX_PENDING_BYTES = 32L << 20;
  private static final Runnable END = () -> {};

  private final EventPublisher publisher;
  private final LinkedBlockingQueue<Pending> queue = new LinkedBlockingQueue<>(MAX_PENDING);
  private final AtomicLong pendingBytes = new AtomicLong();
  private final AtomicLong dropped = new AtomicLong();
  private final Thread thread;
  private volatile boolean closing;

  private record Pending(Runnable publish, long bytes) {}

  public BackgroundEvents(EventPublisher publisher, String jobId) {
    this.publisher = publisher;
    this.thread = new Thread(this::drain, "spb-events-" + jobId);
    this.thread.setDaemon(true);
    this.thread.start();
  }

  public void egress(EgressAttempt attempt) {
    offer(() -> publisher.egress(attempt), attempt.getSerializedSize());
  }

  public void modelCall(ModelCall call) {
    offer(() -> publisher.modelCall(call), call.getSerializedSize());
  }

  /** Events dropped because the queue was full, or offered after {@link #close}. */
  public long dropped() {
    return dropped.get();
  }

  /**
   * Publishes what was offered before, for up to {@code timeout}, then stops; true if everything
   * went out.
   */
  public boolean close(Duration timeout) throws InterruptedException {
    closing = true;
    queue.put(new Pending(END, 0));
    thread.join(timeout.toMillis());
    if (thread.isAlive()) {
      thread.interrupt();
      return false;
    }
    return true;
  }

  private void offer(Runnable publish, long bytes) {
    if (closing) {
      dropped.incrementAndGet();
      return;
    }
    if (pendingBytes.addAndGet(bytes) > MAX_PENDING_BYTES
        || !queue.offer(new Pending(publish, bytes))) {
      pendingBytes.addAndGet(-bytes);
      dropped.incrementAndGet();
    }
  }

  private void drain() {
    try {
      while (true) {
        Pending next = queue.take();
        if (next.publish() == END) {
          return;
        }
        next.publish().run();
        pendingBytes.addAndGet(-next.bytes());
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
