package ai.spboucher.spbgit.runner.egress;

import java.util.ArrayDeque;
import java.util.List;
import java.util.Objects;
import java.util.function.Consumer;

/**
 * Keeps every {@link EgressRecord} of one proxy (allowed and refused) for the job's report, and
 * optionally passes each one to a listener as it is made.
 *
 * <p>Threading: all methods are safe to call from any thread. A record is made when its attempt
 * ends (a refusal at once, a tunnel when both sides have closed), so records appear in order of
 * completion. The listener is called once per record, after it is stored, on the proxy thread that
 * ended the attempt, with no lock held; several proxy threads may call it concurrently. It must
 * therefore be thread-safe and must not block: a verticle should hop back with {@code
 * context.runOnContext(...)} before touching its state or publishing an event. An exception thrown
 * by the listener is logged and otherwise ignored.
 *
 * <p>Memory is bounded: beyond {@code capacity} records the oldest are dropped and counted in
 * {@link #dropped()} (the listener still sees every record).
 */
public final class EgressRecorder {

  public static final int DEFAULT_CAPACITY = 10_000;

  private static final System.Logger LOG = System.getLogger(EgressRecorder.class.getName());

  private final int capacity;
  private final Consumer<? super EgressRecord> listener;
  private final ArrayDeque<EgressRecord> records = new ArrayDeque<>();
  private long dropped;

  /** A recorder with no listener. */
  public EgressRecorder() {
    this(DEFAULT_CAPACITY, record -> {});
  }

  /**
   * A recorder that also hands every record to {@code listener} (see the class comment for
   * threading).
   */
  public EgressRecorder(Consumer<? super EgressRecord> listener) {
    this(DEFAULT_CAPACITY, listener);
  }

  public EgressRecorder(int capacity, Consumer<? super EgressRecord> listener) {
    if (capacity < 1) {
      throw new IllegalArgumentException("capacity must be at least 1");
    }
    this.capacity = capacity;
    this.listener = Objects.requireNonNull(listener, "listener");
  }

  /** A snapshot of the kept records, oldest first. */
  public synchronized List<EgressRecord> records() {
    return List.copyOf(records);
  }

  /** How many old records were dropped to stay within the capacity. */
  public synchronized long dropped() {
    return dropped;
  }

  void record(EgressRecord record) {
    synchronized (this) {
      if (records.size() == capacity) {
        records.removeFirst();
        dropped++;
      }
      records.addLast(record);
    }
    try {
      listener.accept(record);
    } catch (RuntimeException e) {
      LOG.log(System.Logger.Level.WARNING, "egress record listener failed", e);
    }
  }
}
