package ai.spboucher.spbgit.gateway.audit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import io.vertx.junit5.VertxTestContext;
import java.nio.file.Path;
import java.time.Clock;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link AuditWriter} on a real log file: batched appends in order, and reads that never run on the
 * event loop.
 */
@ExtendWith(VertxExtension.class)
class AuditWriterTest {

  @TempDir Path tmp;

  @Test
  void appendsABurstInOrderAndReadsOnTheAuditThread(Vertx vertx, VertxTestContext test)
      throws Exception {
    AuditLog log = AuditLog.open(tmp.resolve("agent-jobs.jsonl"), Clock.systemUTC());
    Context context = vertx.getOrCreateContext();
    Set<String> filterThreads = ConcurrentHashMap.newKeySet();
    context.runOnContext(
        v -> {
          AuditWriter writer = new AuditWriter(vertx, log);
          List<Future<JsonObject>> appended =
              IntStream.range(0, 50)
                  .mapToObj(i -> writer.append(new JsonObject().put("event", "e").put("n", i)))
                  .toList();
          Future.all(appended)
              .compose(
                  all ->
                      writer.entries(
                          e -> {
                            filterThreads.add(Thread.currentThread().getName());
                            return true;
                          }))
              .onComplete(
                  test.succeeding(
                      entries ->
                          test.verify(
                              () -> {
                                assertTrue(
                                    Context.isOnEventLoopThread(),
                                    "the future completes on the caller's context");
                                assertEquals(50, entries.size());
                                for (int i = 0; i < 50; i++) {
                                  assertEquals(i, appended.get(i).result().getInteger("n"));
                                  assertEquals(i + 1, appended.get(i).result().getLong("seq"));
                                  assertEquals(i, entries.get(i).getInteger("n"));
                                }
                                assertEquals(1, filterThreads.size());
                                assertTrue(
                                    filterThreads.iterator().next().startsWith("spb-audit"),
                                    filterThreads.toString());
                                assertFalse(filterThreads.iterator().next().contains("eventloop"));
                                assertTrue(AuditLog.verify(log.file()).ok());
                                log.close();
                                test.completeNow();
                              })));
        });
  }
}
