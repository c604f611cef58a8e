package ai.spboucher.spbgit.gateway.audit;

import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.WorkerExecutor;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.function.Predicate;

/**
 * The {@link AuditLog} seen from an event loop: appends and reads run on one audit thread, never on
 * the caller's. Entries appended while a write is under way are written together, in order, with
 * one fsync: a burst of job changes shares the disk flushes instead of queueing one flush per
 * entry.
 *
 * <p>Threading: call every method on the context that created the writer; the futures complete on
 * it. Appends and reads run in the order they were asked for on a single-thread worker pool ({@code
 * spb-audit}), so a read waits for the appends asked for before it and never holds an event loop
 * while an append holds the log (an fsync). The filters given to {@link #entries} and {@link
 * #lines} run on that thread: they must not read state that belongs to a context.
 */
public final class AuditWriter {

  private final Context context;
  private final AuditLog log;
  private final WorkerExecutor thread;

  /** Entries waiting for the writer, oldest first; on the context only. */
  private final List<Unwritten> unwritten = new ArrayList<>();

  /** Whether an append is under way; on the context only. */
  private boolean writing;

  public AuditWriter(Vertx vertx, AuditLog log) {
    this.context = vertx.getOrCreateContext();
    this.log = log;
    // One thread: appends happen in the order they were asked for, which keeps the hash chain
    // meaningful.
    this.thread = vertx.createSharedWorkerExecutor("spb-audit", 1);
  }

  /**
   * Appends {@code entry}; the future carries it as stored (with {@code seq}, {@code ts} and {@code
   * prev}).
   */
  public Future<JsonObject> append(JsonObject entry) {
    Promise<JsonObject> appended = Promise.promise();
    unwritten.add(new Unwritten(entry, appended));
    if (!writing) {
      writeUnwritten();
    }
    return appended.future();
  }

  /** The stored entries that match {@code filter}, oldest first. */
  public Future<List<JsonObject>> entries(Predicate<JsonObject> filter) {
    return thread.executeBlocking(() -> log.entries(filter), true);
  }

  /**
   * The same entries as {@link #entries}, as the lines the log stores (for verifying their hashes).
   */
  public Future<List<String>> lines(Predicate<JsonObject> filter) {
    return thread.executeBlocking(() -> log.lines(filter), true);
  }

  /**
   * Runs {@code blocking} on the audit thread, after the work already handed to it: for a file
   * write that must follow the entry it is about (revoking the token of a job whose end was just
   * appended).
   */
  public <T> Future<T> runAfter(Callable<T> blocking) {
    return thread.executeBlocking(blocking, true);
  }

  private record Unwritten(JsonObject entry, Promise<JsonObject> appended) {}

  /**
   * On the context: appends every waiting entry at once; entries appended meanwhile wait for the
   * next round.
   */
  private void writeUnwritten() {
    List<Unwritten> batch = new ArrayList<>(unwritten);
    unwritten.clear();
    writing = true;
    thread
        .executeBlocking(() -> log.appendAll(batch.stream().map(Unwritten::entry).toList()), true)
        .onComplete(
            ar -> {
              writing = false;
              for (int i = 0; i < batch.size(); i++) {
                if (ar.succeeded()) {
                  batch.get(i).appended().complete(ar.result().get(i));
                } else {
                  batch.get(i).appended().fail(ar.cause());
                }
              }
              if (!unwritten.isEmpty()) {
                writeUnwritten();
              }
            });
  }
}
